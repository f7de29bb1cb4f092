package engine

import "encoding/json"

// Statuses of an envelope whose ok is true.
const (
	StatusOK            = "ok"
	StatusNeedsApproval = "needs_approval"
	StatusCancelled     = "cancelled"
)

// Envelope is what run and resume return (seed 003).
type Envelope struct {
	OK bool `json:"ok"`
	// Status is ok, needs_approval or cancelled; empty when OK is false.
	Status string `json:"status,omitempty"`
	// Output holds a record per step reached, in order (skipped steps included).
	Output           []StepResult `json:"output"`
	RequiresApproval *Approval    `json:"requiresApproval,omitempty"`
	Error            *Error       `json:"error,omitempty"`
}

// StepResult is what one step did. Values are shown with secrets redacted.
type StepResult struct {
	ID string `json:"id"`
	// Status is ok, skipped (its condition was false), failed, or pending (an approval gate
	// waiting).
	Status   string          `json:"status"`
	Stdout   string          `json:"stdout,omitempty"`
	JSON     json.RawMessage `json:"json,omitempty"`
	ExitCode *int            `json:"exitCode,omitempty"`
	Approved bool            `json:"approved,omitempty"`
	// Truncated is set when the output reached the cap.
	Truncated bool   `json:"truncated,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Approval is the request of a paused run.
type Approval struct {
	Step   string `json:"step"`
	Prompt string `json:"prompt"`
	// Items are the prior output's items when it is a JSON array (else empty).
	Items []json.RawMessage `json:"items"`
	// Preview is the prior output, capped at PreviewBytes, secrets redacted.
	Preview          string `json:"preview"`
	PreviewTruncated bool   `json:"previewTruncated,omitempty"`
	ResumeToken      string `json:"resumeToken"`
}

// Error is the structured error of a failed run.
type Error struct {
	// Kind is invalid (the workflow or request was refused before anything ran), step (a step
	// failed), token (a resume token was refused) or internal.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Step    string `json:"step,omitempty"`
	// Diagnostics are the positioned problems of an invalid workflow, one line each.
	Diagnostics []string `json:"diagnostics,omitempty"`
}

// PreviewBytes caps an approval's preview.
const PreviewBytes = 4096

// maxItems caps the items of an approval request.
const maxItems = 100

func fail(kind, step, format string, args ...any) Envelope {
	return Envelope{OK: false, Output: []StepResult{}, Error: &Error{Kind: kind, Step: step, Message: sprintf(format, args...)}}
}
