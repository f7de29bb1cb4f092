package stepsrun

import (
	"context"
	"encoding/json"

	"github.com/autonomyhq/autonomy/playbook/engine"
)

// Statuses of an envelope whose ok is true.
const (
	StatusOK         = "ok"
	StatusNeedsInput = "needs_input"
	StatusCancelled  = "cancelled"
)

// Envelope is what run and resume print (seed 003's shape, with requiresInput in place of
// requiresApproval).
type Envelope struct {
	OK bool `json:"ok"`
	// Status is ok, needs_input or cancelled; empty when OK is false.
	Status        string        `json:"status,omitempty"`
	Output        Output        `json:"output"`
	RequiresInput *InputRequest `json:"requiresInput,omitempty"`
	Error         *engine.Error `json:"error,omitempty"`
}

// Output is what the run did so far.
type Output struct {
	// Steps has a record per step reached, in order (skipped sub-steps included).
	Steps []Record `json:"steps"`
	// Outputs are the captured @output values and elicitation answers, by name.
	Outputs map[string]string `json:"outputs"`
	// Artifact is the ## ARTIFACTS result, once the run finished.
	Artifact *Artifact `json:"artifact,omitempty"`
}

// Record is one step's result.
type Record struct {
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

// InputRequest is the elicitation a parked run waits for.
type InputRequest struct {
	Step string `json:"step"`
	// Kind is input, confirm or select.
	Kind        string   `json:"kind"`
	Prompt      string   `json:"prompt"`
	Options     []string `json:"options"`
	ResumeToken string   `json:"resumeToken"`
}

// Agent runs one step's prompt and returns its final message.
type Agent interface {
	Invoke(ctx context.Context, step, prompt string) (string, error)
}

// Store keeps paused runs (by token hash) and run checkpoints (by key): the local store.
type Store interface {
	engine.Pauses
	PutState(ctx context.Context, key, session string, state []byte) error
	GetState(ctx context.Context, key string) ([]byte, bool, error)
}

// Request starts a run.
type Request struct {
	// File is the step playbook's path.
	File string
	// ArgsJSON is a JSON object of the inputs.
	ArgsJSON string
	// ArtifactsDir is where ## ARTIFACTS is written ("" to only return it).
	ArtifactsDir string
	// Session is the local session the run belongs to ("" for none); it keys the checkpoint.
	Session string
	// Agent is the agent command every step runs (kept with a paused run, so that its resume,
	// from any process, runs the same one).
	Agent AgentSpec
	// IgnoreUnknownArgs drops args the playbook does not declare (a runner passes every param).
	IgnoreUnknownArgs bool
}

// AgentSpec is the agent command of a run: Command's Argv, Preset and Dir.
type AgentSpec struct {
	Argv   []string `json:"argv"`
	Preset string   `json:"preset,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	// TimeoutMs bounds each invocation (0: none); a timeout kills the agent's process group.
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// Answer is a person's answer to an elicitation.
type Answer struct {
	// Text answers an input or a select (and yes/no a confirm).
	Text string
	// Approve and Deny answer a confirm (yes, no).
	Approve, Deny bool
	// Cancel cancels the run instead.
	Cancel bool
}

// kind marks a saved state as a step playbook's (a workflow's state has none).
const kind = "steps"

// state is what a checkpoint or a pause saves.
type state struct {
	Kind         string            `json:"kind"`
	Key          string            `json:"key"`
	File         string            `json:"file"`
	Source       []byte            `json:"source"`
	Inputs       map[string]string `json:"inputs"`
	ArtifactsDir string            `json:"artifactsDir,omitempty"`
	Session      string            `json:"session,omitempty"`
	Agent        AgentSpec         `json:"agent"`
	// Vars are the captured outputs and answers.
	Vars    map[string]string `json:"vars"`
	Records []Record          `json:"records"`
	// Running is the label of the step started and not recorded as ended.
	Running string `json:"running,omitempty"`
	// Waiting is the label of the step waiting for a person; Answer its answer once given.
	Waiting string  `json:"waiting,omitempty"`
	Answer  *string `json:"answer,omitempty"`
}

// IsState reports whether raw is the saved state of a step playbook run.
func IsState(raw []byte) bool {
	var s struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Kind == kind
}
