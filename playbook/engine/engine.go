package engine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/ir/resolved"
	pbsource "github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// Defaults of the limits (seed 003's example values).
const (
	DefaultTimeoutMs      = 30000
	DefaultMaxOutputBytes = 512000
)

// The largest limits a run takes: a step's timeout of one week (ir.MaxTimeout, the longest an
// actor may run), an output cap of 64 MiB (a step's output is held in memory and in the envelope).
const (
	MaxTimeoutMs      = workflow.MaxTimeoutMs
	MaxMaxOutputBytes = 64 << 20
)

// CheckLimits refuses a timeout or an output cap out of range: 1 to MaxTimeoutMs milliseconds,
// 1 to MaxMaxOutputBytes bytes (0 is the default of each).
func CheckLimits(timeoutMs, maxOutputBytes int) error {
	if timeoutMs < 0 || timeoutMs > MaxTimeoutMs {
		return fmt.Errorf("the timeout must be from 1 to %d milliseconds, not %d", MaxTimeoutMs, timeoutMs)
	}
	if maxOutputBytes < 0 || maxOutputBytes > MaxMaxOutputBytes {
		return fmt.Errorf("the output cap must be from 1 to %d bytes, not %d", MaxMaxOutputBytes, maxOutputBytes)
	}
	return nil
}

// Pauses keeps paused runs durably (the local store implements it).
type Pauses interface {
	SavePause(ctx context.Context, tokenHash, session string, state []byte) error
	TakePause(ctx context.Context, tokenHash string) (state []byte, session string, ok bool, err error)
}

// Request starts a run.
type Request struct {
	// Pipeline is a workflow file's path, or an inline pipeline: a workflow's YAML or JSON text,
	// or commands joined by | (each step's stdin is the previous step's stdout).
	Pipeline string
	// ArgsJSON is a JSON object of the workflow's args.
	ArgsJSON string
	// Workspace is the directory no step may leave (default: the current directory).
	Workspace string
	// Cwd is where steps run, relative to the workspace.
	Cwd            string
	TimeoutMs      int
	MaxOutputBytes int
	// Secrets are the names of the secret handles policy allows.
	Secrets []string
	// Session is the local session the run belongs to ("" for none).
	Session string
	// IgnoreUnknownArgs drops the args the workflow does not declare instead of refusing them
	// (a runner passes every launch param; the workflow declares those it reads).
	IgnoreUnknownArgs bool
	// MCPServers are the servers mcp steps may call (policy.box.mcp.servers), by name.
	MCPServers map[string]MCPServer
	// CLI is policy.box.cli: the programs cli steps may run (nil: any).
	CLI *resolved.CLIPolicy
	// Web is policy.box.web: the hosts web steps may fetch from (nil: no web step runs).
	Web *resolved.WebPolicy
}

// Engine runs and resumes workflows.
type Engine struct {
	Pauses Pauses
	// Secret resolves an allowed handle to its value (default: the environment variable).
	Secret func(name string) (string, bool)
	// Env is the environment of cli steps (default: the process's).
	Env []string
	// OutputDrain is how long a cli step's output is still read once its process has exited,
	// while something it left running (a background child) holds the output open; then the
	// step's process group is killed, and the step keeps its exit status and the output read
	// (default DefaultOutputDrain).
	OutputDrain time.Duration
}

// DefaultOutputDrain is how long a step's output is drained after its process exited.
const DefaultOutputDrain = 250 * time.Millisecond

func (e *Engine) drain() time.Duration {
	if e.OutputDrain > 0 {
		return e.OutputDrain
	}
	return DefaultOutputDrain
}

// state is what a pause saves: everything a resume needs, and no secret value.
type state struct {
	File           string               `json:"file"`
	Source         []byte               `json:"source"`
	Args           map[string]string    `json:"args"`
	Workspace      string               `json:"workspace"`
	Cwd            string               `json:"cwd"`
	TimeoutMs      int                  `json:"timeoutMs"`
	MaxOutputBytes int                  `json:"maxOutputBytes"`
	Secrets        []string             `json:"secrets"`
	Session        string               `json:"session"`
	MCP            map[string]MCPServer `json:"mcp,omitempty"`
	CLI            *resolved.CLIPolicy  `json:"cli,omitempty"`
	Web            *resolved.WebPolicy  `json:"web,omitempty"`
	// Next is the index of the approval step the run waits at; Results the raw records of the
	// steps before it.
	Next    int      `json:"next"`
	Results []record `json:"results"`
}

// record is a step's raw result, unredacted, as later references read it.
type record struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Stdout   string `json:"stdout"`
	JSON     []byte `json:"json,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Approved bool   `json:"approved,omitempty"`
	Trunc    bool   `json:"truncated,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Run starts the workflow of req and runs it until it ends or pauses.
func (e *Engine) Run(ctx context.Context, req Request) Envelope {
	st, env := e.prepare(req)
	if env != nil {
		return *env
	}
	return e.run(ctx, st, false)
}

// Resume redeems token: approve runs the waiting step and what follows, deny cancels the run.
// A token is accepted once; a wrong or used one is refused.
func (e *Engine) Resume(ctx context.Context, token string, approve bool) Envelope {
	return e.redeem(ctx, playproto.HashToken(token), approve)
}

// Continue runs the approved run a runner saved with Hold under playproto.ContinueKey(session).
func (e *Engine) Continue(ctx context.Context, session string) Envelope {
	return e.redeem(ctx, playproto.ContinueKey(session), true)
}

// Cancelled is the envelope of a paused run denied: its records and the denied step.
func (e *Engine) Cancelled(raw []byte) Envelope {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return fail("internal", "", "reading the paused run: %v", err)
	}
	return e.deny(&st)
}

// PausedStep names the step a paused run's state waits at.
func PausedStep(raw []byte) string {
	var st state
	if json.Unmarshal(raw, &st) != nil {
		return ""
	}
	w, _ := workflow.Parse(st.File, st.Source)
	if w == nil || st.Next >= len(w.Steps) {
		return ""
	}
	return w.Steps[st.Next].ID.Value
}

func (e *Engine) redeem(ctx context.Context, key string, approve bool) Envelope {
	if e.Pauses == nil {
		return fail("internal", "", "no store of paused runs")
	}
	raw, _, ok, err := e.Pauses.TakePause(ctx, key)
	if err != nil {
		return fail("internal", "", "%v", err)
	}
	if !ok {
		return fail("token", "", "the resume token is not recognized: it is wrong, or was already used (a token resumes a run once)")
	}
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return fail("internal", "", "reading the paused run: %v", err)
	}
	if !approve {
		return e.deny(&st)
	}
	return e.run(ctx, &st, true)
}

func (e *Engine) deny(st *state) Envelope {
	out := e.view(st, append(st.Results, record{ID: pausedStepOf(st), Status: "denied", Reason: "denied by the approver"}))
	return Envelope{OK: true, Status: StatusCancelled, Output: out}
}

// pausedStepOf names the step st waits at.
func pausedStepOf(st *state) string {
	raw, _ := json.Marshal(st)
	return PausedStep(raw)
}

// NewToken draws a random resume token (32 bytes, base64url, prefixed rt_); it is stored only
// as playproto.HashToken of it. The step playbook runtime pauses with the same tokens.
func NewToken() (string, error) { return newToken() }

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "rt_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// prepare reads, validates and binds the request; a non-nil envelope is the refusal.
func (e *Engine) prepare(req Request) (*state, *Envelope) {
	refuse := func(format string, args ...any) (*state, *Envelope) {
		env := fail("invalid", "", format, args...)
		return nil, &env
	}
	if err := CheckLimits(req.TimeoutMs, req.MaxOutputBytes); err != nil {
		return refuse("%v", err)
	}
	ws := req.Workspace
	if ws == "" {
		ws = "."
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return refuse("the workspace: %v", err)
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return refuse("the workspace: %v", err)
	}
	file, src, err := source(req.Pipeline)
	if err != nil {
		return refuse("%v", err)
	}
	w, diags := workflow.Check(file, src)
	diags = append(diags, allowed(w, req.Secrets)...)
	diags = append(diags, CheckMCP(w, req.MCPServers)...)
	diags = append(diags, CheckCLI(w, req.CLI)...)
	diags = append(diags, CheckWeb(w, req.Web)...)
	if diags.HasErrors() {
		env := fail("invalid", "", "the workflow is not valid: %d problems", diags.Errors())
		for _, d := range diags.Sort() {
			env.Error.Diagnostics = append(env.Error.Diagnostics, d.String())
		}
		return nil, &env
	}
	args, err := bindArgs(w, req.ArgsJSON, req.IgnoreUnknownArgs)
	if err != nil {
		return refuse("%v", err)
	}
	st := &state{File: file, Source: src, Args: args, Workspace: ws, Cwd: req.Cwd,
		TimeoutMs: req.TimeoutMs, MaxOutputBytes: req.MaxOutputBytes, Secrets: req.Secrets, Session: req.Session, MCP: req.MCPServers, CLI: req.CLI, Web: req.Web}
	if st.TimeoutMs <= 0 {
		st.TimeoutMs = DefaultTimeoutMs
	}
	if st.MaxOutputBytes <= 0 {
		st.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if _, err := confine(ws, req.Cwd, ""); err != nil {
		return refuse("--cwd: %v", err)
	}
	return st, nil
}

// source reads a pipeline: a file path, or inline text.
func source(p string) (string, []byte, error) {
	t := strings.TrimSpace(p)
	switch {
	case t == "":
		return "", nil, fmt.Errorf("no pipeline: give a workflow file or an inline pipeline")
	case strings.Contains(t, "\n") || strings.HasPrefix(t, "{") || strings.HasPrefix(t, "steps:") || strings.HasPrefix(t, "name:"):
		return "<pipeline>", []byte(p), nil
	case !strings.Contains(t, " ") && (strings.HasSuffix(t, ".yml") || strings.HasSuffix(t, ".yaml") || strings.HasSuffix(t, ".json") || strings.ContainsRune(t, os.PathSeparator)):
		data, err := pbsource.ReadFile(t, workflow.MaxSize)
		if err != nil {
			return "", nil, fmt.Errorf("reading the workflow: %w", err)
		}
		return t, data, nil
	}
	y, err := inline(t)
	if err != nil {
		return "", nil, err
	}
	return "<pipeline>", y, nil
}

// bindArgs merges the request's args over the declared defaults; an arg not declared, or one
// without a default and not given, is refused.
func bindArgs(w *workflow.Workflow, argsJSON string, lenient bool) (map[string]string, error) {
	given := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		if err := json.Unmarshal([]byte(argsJSON), &given); err != nil {
			return nil, fmt.Errorf("--args-json is not a JSON object: %v", err)
		}
	}
	out := map[string]string{}
	declared := map[string]bool{}
	for _, a := range w.Args {
		declared[a.Name.Value] = true
		if a.Default != nil {
			out[a.Name.Value] = a.Default.Value
		}
	}
	var unknown []string
	for k, v := range given {
		if !declared[k] {
			unknown = append(unknown, k)
			continue
		}
		out[k] = ArgString(v)
	}
	if len(unknown) > 0 && !lenient {
		sort.Strings(unknown)
		return nil, fmt.Errorf("--args-json: the workflow declares no arg %s", strings.Join(unknown, ", "))
	}
	for _, a := range w.Args {
		if _, ok := out[a.Name.Value]; !ok {
			return nil, fmt.Errorf("--args-json: the arg %q has no default and is not given", a.Name.Value)
		}
	}
	return out, nil
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// ArgString is an --args-json value as a step sees it: a string as it is, anything else as its
// JSON.
func ArgString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
