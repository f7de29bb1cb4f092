package engine

import "github.com/autonomyhq/autonomy/internal/playproto"

// Statuses of an envelope whose ok is true (playproto's, the protocol a runner reads).
const (
	StatusOK            = playproto.StatusOK
	StatusNeedsApproval = playproto.StatusNeedsApproval
	StatusCancelled     = playproto.StatusCancelled
)

// Envelope is what run and resume return (seed 003): playproto.Envelope, which a runner reads.
type Envelope = playproto.Envelope

// StepResult is what one step did (playproto.StepResult).
type StepResult = playproto.StepResult

// Approval is the request of a paused run (playproto.Approval).
type Approval = playproto.Approval

// Error is the structured error of a failed run (playproto.Error).
type Error = playproto.Error

// PreviewBytes caps an approval's preview.
const PreviewBytes = 4096

// maxItems caps the items of an approval request.
const maxItems = 100

func fail(kind, step, format string, args ...any) Envelope {
	return Envelope{OK: false, Output: []StepResult{}, Error: &Error{Kind: kind, Step: step, Message: sprintf(format, args...)}}
}
