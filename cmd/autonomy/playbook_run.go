package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/resume"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// defaultPlaybookState is where autonomy playbook run keeps paused runs when --state is not
// given: $XDG_STATE_HOME/autonomy/playbooks.db, else ~/.local/state/autonomy/playbooks.db.
func defaultPlaybookState() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "autonomy", "playbooks.db")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".autonomy", "state", "playbooks.db")
	}
	return filepath.Join(home, ".local", "state", "autonomy", "playbooks.db")
}

func newPlaybookRun() *cobra.Command {
	var req engine.Request
	var pipeline, statePath, mcpServers, argsEnv, request string
	var cliAllow, cliDeny, webAllow []string
	var sf stepsFlags
	cmd := &cobra.Command{
		Use:   "run FILE | --pipeline '…' | --request FILE|-",
		Short: "Run a workflow playbook (seed 003) or a step playbook (seed 002) and print its envelope",
		Long: `run executes a workflow playbook's steps in order and prints the envelope as JSON:
{"ok", "status": "ok" | "needs_approval" | "cancelled", "output": [step records],
 "requiresApproval": {"step", "prompt", "items", "preview", "resumeToken"}, "error": {...}}.

cli steps are exec'd directly (argv split by shell-word rules, never through a shell); http steps
make the request (http METHOD URL [-H 'Name: value']..., stdin is the body); mcp steps
(mcp SERVER TOOL [NAME=VALUE | NAME:=JSON | JSON-OBJECT]...) call a tool of a server given by
--mcp-servers (a JSON object as policy.box.mcp.servers: {"NAME": {"command": [ARGV...],
"env": [VAR...], "timeoutMs": N}}), started over stdio for the call, in its own process group,
with only PATH, the locale and the variables it lists; node steps (node SCRIPT [ARG]...) run a
workspace script with Node as a cli step runs; web steps (web URL) fetch one URL from a host
--web-allow lists (none: refused). --cli-allow/--cli-deny are policy.box.cli: the programs cli
steps may run. A step's schema: validates its JSON output and its postcondition: runs once it
succeeded. A step with approval: required pauses the run: resume it with
autonomy playbook resume --token T --approve|--deny (from any process).

Limits: --timeout-ms per step (1 to 604800000, one week; the step's own timeoutMs may only lower
it; a timeout kills the step's whole process group), --max-output-bytes per step (1 to 67108864;
passing it fails the step; out of range, either is a usage error), and every
cwd stays inside the workspace (the current directory), symlinks out refused. A $secrets.NAME
handle must be allowed with --secret NAME; its value is read from the environment variable NAME
and is redacted from everything printed.

A markdown step playbook (FILE.md with ## STEP N: headings) runs step by step with an agent preset
(--agent, --model, --sandbox), one invocation per step that sees the outputs before it; its
envelope has status ok, needs_input (an @elicit: requiresInput {step, kind, prompt, options,
resumeToken}) or cancelled, output {steps, outputs, artifact}; ## ARTIFACTS goes to
--artifacts-dir. Running the same command again after the process was killed continues at the
next unfinished step (docs/playbooks.md#running-step-playbooks).

FILE is read as playbook validate reads it: a regular file (not a FIFO or a device, nor a link to
one) within its format's size limit, else exit 2.

--request FILE (- for stdin) takes seed 003's JSON request instead of the flags, so another
runtime can drive this one: {"action": "run", "pipeline": "<inline pipeline or workflow file
path>", "argsJson": "{\"k\":\"v\"}", "cwd": "<workspace-relative>", "timeoutMs": N,
"maxOutputBytes": N} runs (argsJson may also be an object), {"action": "resume", "token": "<resumeToken>",
"approve": true|false} resumes; the answer is the envelope. A request that does not read (bad
JSON, an unknown member, a member of the other action, a limit out of range) is an envelope with
ok false and error kind invalid naming the line and column or the member; --workspace, --secret,
--mcp-servers and --state still apply; the flags the request carries are refused beside it.
For example: echo '{"action": "run", "pipeline": "cli echo hi"}' | autonomy playbook run --request -

Exit codes: 0 the envelope's ok is true (ok, needs_approval, needs_input or cancelled), 1 ok is false, 2 usage.`,
		Example: `  autonomy playbook run docs/examples/inbox-triage.yml --args-json '{"tag":"work"}'
  autonomy playbook run --pipeline "cli git status --porcelain | approve 'Commit these?' | cli git commit -am wip"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkIntFlags(cmd); err != nil {
				return err
			}
			if mcpServers != "" {
				servers, err := engine.ParseServers(mcpServers)
				if err != nil {
					return usageError("--mcp-servers: %v", err)
				}
				req.MCPServers = servers
			}
			for _, n := range append(append([]string(nil), cliAllow...), cliDeny...) {
				if !ir.IsProgramName(n) {
					return usageError("--cli-allow/--cli-deny: %q is not a program name (write its name, e.g. git: a path's last element is what is matched)", n)
				}
			}
			for _, h := range webAllow {
				if !ir.IsHostPattern(h) {
					return usageError("--web-allow: %q is not a host (write a host name, e.g. docs.example.com, or *.example.com)", h)
				}
			}
			if len(webAllow) > 0 {
				req.Web = &resolved.WebPolicy{Allow: webAllow}
			}
			if len(cliAllow) > 0 || len(cliDeny) > 0 {
				req.CLI = &resolved.CLIPolicy{Allow: cliAllow, Deny: cliDeny}
			}
			if request != "" {
				return runRequest(cmd, request, len(args), req, statePath) // playbook_request.go
			}
			if argsEnv != "" {
				if req.ArgsJSON != "" {
					return usageError("give --args-json or --args-env, not both")
				}
				j, err := argsFromEnv(argsEnv, os.LookupEnv)
				if err != nil {
					return err
				}
				req.ArgsJSON = j
			}
			switch {
			case len(args) == 1 && pipeline != "":
				return usageError("give a FILE or --pipeline, not both")
			case len(args) == 1:
				req.Pipeline = args[0]
				_, format, err := playbook.ReadFile(args[0])
				if err != nil {
					return usageError("%v", err)
				}
				if format == playbook.Steps {
					return runSteps(cmd, statePath, args[0], req, &sf)
				}
			case pipeline != "":
				req.Pipeline = pipeline
			default:
				return usageError("give a workflow FILE or --pipeline '…'")
			}
			return runEngine(cmd, statePath, func(ctx context.Context, e *engine.Engine) engine.Envelope {
				return e.Run(ctx, req)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&request, "request", "", "read seed 003's JSON run or resume request from FILE (- for stdin) and print its envelope")
	f.StringVar(&pipeline, "pipeline", "", "an inline pipeline: workflow YAML/JSON, or commands joined by | with approve \"PROMPT\" gates")
	f.StringVar(&req.ArgsJSON, "args-json", "", "the workflow's args, a JSON object")
	f.StringVar(&argsEnv, "args-env", "", "the args from environment variables: NAME[,NAME]..., each set and non-empty one an arg of that name")
	f.StringVar(&req.Workspace, "workspace", ".", "the directory no step may leave")
	f.StringVar(&req.Cwd, "cwd", "", "where steps run, relative to the workspace")
	decimalIntVar(f, &req.TimeoutMs, "timeout-ms", engine.DefaultTimeoutMs, "the timeout of each step, in milliseconds")
	decimalIntVar(f, &req.MaxOutputBytes, "max-output-bytes", engine.DefaultMaxOutputBytes, "the output cap of each step, in bytes")
	f.StringSliceVar(&req.Secrets, "secret", nil, "allow the secret handle $secrets.NAME (value from the environment variable NAME); repeatable")
	f.StringSliceVar(&cliAllow, "cli-allow", nil, "the only programs cli steps may run, as policy.box.cli.allow; repeatable")
	f.StringSliceVar(&cliDeny, "cli-deny", nil, "programs cli steps never run, as policy.box.cli.deny; repeatable")
	f.StringSliceVar(&webAllow, "web-allow", nil, "a host web steps may fetch from, as policy.box.web.allow (*.example.com: its subdomains); repeatable")
	f.StringVar(&mcpServers, "mcp-servers", "", "the MCP servers mcp steps may call, a JSON object as policy.box.mcp.servers")
	f.StringVar(&statePath, "state", defaultPlaybookState(), "the SQLite database of paused runs (a directory: its playbooks.db)")
	f.StringVar(&req.Session, "session", "", "the local runner's session the run belongs to (set by the runner)")
	_ = f.MarkHidden("session")
	f.BoolVar(&req.IgnoreUnknownArgs, "ignore-unknown-args", false, "drop the args the workflow does not declare (set by the runner)")
	_ = f.MarkHidden("ignore-unknown-args")
	sf.add(f)
	return cmd
}

func newPlaybookResume() *cobra.Command {
	var token, statePath, cont, answer, workspace, book string
	var sf stepsFlags
	var approve, deny, cancel bool
	cmd := &cobra.Command{
		Use:   "resume --token T --approve|--deny|--answer TEXT|--cancel",
		Short: "Resume a paused workflow or step playbook run with its token",
		Long: `resume redeems a paused run's resume token, once: --approve runs the waiting step and
the steps after it (no completed step runs again), --deny cancels the run (no further side effect;
the envelope's status is cancelled). A wrong or already used token is refused (ok: false).
A step playbook waiting at an @elicit is answered with --answer TEXT (an input, a select's
option), --approve/--deny (a confirm: yes/no) or --cancel; an answer that does not fit is
refused and the token stays valid.

Exit codes: 0 the envelope's ok is true, 1 ok is false, 2 usage.`,
		Example: `  autonomy playbook resume --token rt_… --approve`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkIntFlags(cmd); err != nil {
				return err
			}
			n := 0
			for _, b := range []bool{approve, deny, cancel, cmd.Flags().Changed("answer")} {
				if b {
					n++
				}
			}
			if cont == "" && (token == "" || n != 1) {
				return usageError("give --token T and one of --approve, --deny, --answer TEXT or --cancel")
			}
			if err := sf.checkPauseFile(); err != nil {
				return err
			}
			if book != "" {
				// Read here as run reads a file: a FIFO or a device is refused, not waited on.
				if _, _, err := playbook.ReadFile(book); err != nil {
					return usageError("--playbook: %v", err)
				}
			}
			req := resume.Request{Token: token, Continue: cont, Answer: stepsrun.Answer{Text: answer, Approve: approve, Deny: deny, Cancel: cancel},
				Log: cmd.ErrOrStderr(), ArtifactsDir: sf.artifactsDir, Playbook: book, PauseFile: sf.pauseFile}
			if workspace != "" {
				abs, err := filepath.Abs(workspace)
				if err != nil {
					return usageError("--workspace: %v", err)
				}
				req.Workspace = abs
			}
			if sf.agent != "" || sf.agentArgv != "" {
				// The agent the resuming job was compiled with, not the one saved with the pause.
				spec, err := sf.spec(cmd, req.Workspace)
				if err != nil {
					return err
				}
				req.Agent = &spec
			}
			return withStore(cmd, statePath, func(ctx context.Context, st *store.Store) any { return resume.Resume(ctx, st, req) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&token, "token", "", "the resume token of the paused run")
	f.BoolVar(&approve, "approve", false, "approve the waiting step")
	f.BoolVar(&deny, "deny", false, "deny it: cancel the run (a step playbook's confirm: answer no)")
	f.StringVar(&answer, "answer", "", "a step playbook's elicitation: the answer (an input's text, a select's option, yes or no)")
	f.BoolVar(&cancel, "cancel", false, "a step playbook's elicitation: cancel the run instead of answering")
	f.StringVar(&workspace, "workspace", "", "a step playbook: where its agent works from now on (default: where the run started)")
	f.StringVar(&book, "playbook", "", "a step playbook: its file, which must hold what the paused run was started with (the run goes on from it)")
	sf.add(f) // a step playbook: --agent/--agent-argv replace the agent saved with the pause; --artifacts-dir where ## ARTIFACTS go
	f.StringVar(&cont, "continue", "", "continue the approved run of a local session (used by the runner)")
	_ = f.MarkHidden("continue")
	f.StringVar(&statePath, "state", defaultPlaybookState(), "the SQLite database of paused runs (a directory: its playbooks.db)")
	return cmd
}

// decimalInt is an int flag read in base 10 only: pflag's own int flags read 010 as octal (8)
// and 0x10 as hexadecimal.
type decimalInt struct{ p *int }

func (d decimalInt) String() string { return strconv.Itoa(*d.p) }
func (d decimalInt) Type() string   { return "int" }

func (d decimalInt) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%s is too large a number", s)
	}
	if err != nil {
		return fmt.Errorf("%q is not a whole number written in decimal", s)
	}
	*d.p = int(v)
	return nil
}

// decimalIntVar defines an int flag read in base 10 (decimalInt), def by default.
func decimalIntVar(f *pflag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	f.Var(decimalInt{p}, name, usage)
}

// intFlagRange is the valid values of a numeric flag.
type intFlagRange struct {
	min, max int
	unit     string
}

// intFlagRanges are the ranges of the numeric flags of playbook run, resume and step, by name:
// every int flag of theirs has one (TestPlaybookNumericFlags tries each out of its range).
var intFlagRanges = map[string]intFlagRange{
	"timeout-ms":       {1, engine.MaxTimeoutMs, "milliseconds"},
	"max-output-bytes": {1, engine.MaxMaxOutputBytes, "bytes"},
}

// checkIntFlags refuses a numeric flag of cmd outside its range (a usage error); a numeric flag
// without a range, or of a type other than a whole number, is refused as a bug.
func checkIntFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		t := f.Value.Type()
		if err != nil || !strings.HasPrefix(t, "int") && !strings.HasPrefix(t, "uint") && !strings.HasPrefix(t, "float") && t != "duration" {
			return
		}
		r, ok := intFlagRanges[f.Name]
		if !ok {
			err = usageError("--%s has no valid range: an autonomy bug, please report it", f.Name)
			return
		}
		if v, perr := strconv.ParseInt(f.Value.String(), 10, 64); perr != nil || v < int64(r.min) || v > int64(r.max) {
			err = usageError("--%s must be from %d to %d %s, not %s", f.Name, r.min, r.max, r.unit, f.Value.String())
		}
	})
	return err
}

// argsFromEnv is the args JSON object of the variables names lists (comma-separated): each set
// to a non-empty value is an arg of its name (a param a trigger did not fill is left out, so a
// default applies).
func argsFromEnv(names string, lookup func(string) (string, bool)) (string, error) {
	args := map[string]string{}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !envName().MatchString(n) {
			return "", usageError("--args-env: %q is not an environment variable name", n)
		}
		if v, ok := lookup(n); ok && v != "" {
			args[n] = v
		}
	}
	b, err := json.Marshal(args)
	return string(b), err
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

func printEnvelope(w io.Writer, env engine.Envelope) error {
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return usageError("%v", err)
	}
	fmt.Fprintf(w, "%s\n", b)
	if !env.OK {
		return &exitError{Code: exitProblems}
	}
	return nil
}

// runEngine opens the database of paused runs, calls do with an engine over it (cancelled by
// SIGTERM or an interrupt), and prints the envelope do returns.
func runEngine(cmd *cobra.Command, statePath string, do func(context.Context, *engine.Engine) engine.Envelope) error {
	db, err := stateDB(statePath)
	if err != nil {
		return err
	}
	st, err := store.Open(db)
	if err != nil {
		return usageError("%v", err)
	}
	defer st.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return printEnvelope(cmd.OutOrStdout(), do(ctx, &engine.Engine{Pauses: st}))
}
