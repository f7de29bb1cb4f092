package mcpserver

import (
	"context"

	"github.com/autonomyhq/autonomy/internal/tools"
)

// Reader answers the read tools and resolves session actors; the recorder leaves reads to it.
type Reader interface {
	Read(ctx context.Context, tool string, in tools.Input) (any, error)
	SessionActor(ctx context.Context, id string) (string, error)
}

// Recorder is the Backend of a session whose effects a trusted job applies after it ends (the
// gh-actions model job): each checked effect is appended to the safe-output file, and the model
// is told it is queued, not done.
type Recorder struct {
	Reader
	Outputs *tools.Outputs
}

// Recorded is what the model reads after an effect is recorded.
type Recorded struct {
	Recorded bool   `json:"recorded"`
	Note     string `json:"note"`
}

// Apply appends the effect to the safe outputs.
func (r Recorder) Apply(_ context.Context, e tools.Effect, _ tools.Input) (any, error) {
	if err := r.Outputs.Append(e); err != nil {
		return nil, err
	}
	return Recorded{Recorded: true, Note: "queued: a trusted job applies it after this session ends, if the actor's capabilities allow it"}, nil
}
