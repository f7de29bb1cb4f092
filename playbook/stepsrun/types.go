package stepsrun

import (
	"context"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook/engine"
)

// Statuses of an envelope whose ok is true (playproto's, the protocol a runner reads).
const (
	StatusOK         = playproto.StatusOK
	StatusNeedsInput = playproto.StatusNeedsInput
	StatusCancelled  = playproto.StatusCancelled
)

// Envelope is what run and resume print: playproto.StepsEnvelope, which a runner reads.
type Envelope = playproto.StepsEnvelope

// Output is what the run did so far (playproto.StepsOutput).
type Output = playproto.StepsOutput

// Record is one step's result (playproto.StepRecord).
type Record = playproto.StepRecord

// Artifact is the written ## ARTIFACTS result (playproto.Artifact).
type Artifact = playproto.Artifact

// InputRequest is the elicitation a parked run waits for (playproto.InputRequest).
type InputRequest = playproto.InputRequest

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

// Answer is a person's answer to an elicitation (playproto.Answer).
type Answer = playproto.Answer

// kind marks a saved state as a step playbook's (a workflow's state has none).
const kind = playproto.StepsKind

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
