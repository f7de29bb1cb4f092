package playproto

import "encoding/json"

// Statuses of an envelope whose ok is true: a workflow's (ok, needs_approval, cancelled) and a
// step playbook's (ok, needs_input, cancelled).
const (
	StatusOK            = "ok"
	StatusNeedsApproval = "needs_approval"
	StatusNeedsInput    = "needs_input"
	StatusCancelled     = "cancelled"
)

// Envelope is what a workflow playbook's run and resume return (seed 003).
type Envelope struct {
	OK bool `json:"ok"`
	// Status is ok, needs_approval or cancelled; empty when OK is false.
	Status string `json:"status,omitempty"`
	// Output holds a record per step reached, in order (skipped steps included).
	Output           []StepResult `json:"output"`
	RequiresApproval *Approval    `json:"requiresApproval,omitempty"`
	Error            *Error       `json:"error,omitempty"`
}

// StepResult is what one workflow step did. Values are shown with secrets redacted.
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

// Approval is the request of a paused workflow run.
type Approval struct {
	Step   string `json:"step"`
	Prompt string `json:"prompt"`
	// Items are the prior output's items when it is a JSON array (else empty).
	Items []json.RawMessage `json:"items"`
	// Preview is the prior output, capped, secrets redacted.
	Preview          string `json:"preview"`
	PreviewTruncated bool   `json:"previewTruncated,omitempty"`
	ResumeToken      string `json:"resumeToken"`
}

// Error is the structured error of a failed run.
type Error struct {
	// Kind is invalid (the playbook or request was refused before anything ran), step (a step
	// failed), token (a resume token was refused) or internal.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Step    string `json:"step,omitempty"`
	// Diagnostics are the positioned problems of an invalid playbook, one line each.
	Diagnostics []string `json:"diagnostics,omitempty"`
}

// StepsEnvelope is what a step playbook's run and resume print (seed 003's shape, with
// requiresInput in place of requiresApproval).
type StepsEnvelope struct {
	OK bool `json:"ok"`
	// Status is ok, needs_input or cancelled; empty when OK is false.
	Status        string        `json:"status,omitempty"`
	Output        StepsOutput   `json:"output"`
	RequiresInput *InputRequest `json:"requiresInput,omitempty"`
	Error         *Error        `json:"error,omitempty"`
}

// StepsOutput is what a step playbook run did so far.
type StepsOutput struct {
	// Steps has a record per step reached, in order (skipped sub-steps included).
	Steps []StepRecord `json:"steps"`
	// Outputs are the captured @output values and elicitation answers, by name.
	Outputs map[string]string `json:"outputs"`
	// Artifact is the ## ARTIFACTS result, once the run finished.
	Artifact *Artifact `json:"artifact,omitempty"`
}

// StepRecord is one step playbook step's result.
type StepRecord struct {
	// Step is the label: "2", or "2a" for a sub-step.
	Step  string `json:"step"`
	Title string `json:"title"`
	// Status is ok, skipped (a branch not taken), failed, pending (waiting for a person) or
	// cancelled.
	Status string `json:"status"`
	// Output is the agent's final message ("" for a step without an invocation).
	Output string `json:"output,omitempty"`
	// Var and Value are the captured @output.
	Var   string `json:"var,omitempty"`
	Value string `json:"value,omitempty"`
	// Answer is the person's answer to the step's @elicit.
	Answer string `json:"answer,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Artifact is the written ## ARTIFACTS result.
type Artifact struct {
	Type string `json:"type"`
	// Path is where it was written ("" without an artifacts directory); Content is its text.
	Path    string `json:"path,omitempty"`
	Content string `json:"content"`
}

// InputRequest is the elicitation a parked step playbook run waits for.
type InputRequest struct {
	Step string `json:"step"`
	// Kind is input, confirm or select.
	Kind        string   `json:"kind"`
	Prompt      string   `json:"prompt"`
	Options     []string `json:"options"`
	ResumeToken string   `json:"resumeToken"`
}
