package localcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliflag"
	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/playbook/runtimes"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// runnerFlags are the flags every runner verb shares.
type runnerFlags struct {
	// host finds the substrate --target names.
	host   substrates.Host
	dir    string
	format string
	// substrate is local, or gh-actions for the GitHub runner inside a job (runner_gh.go).
	substrate string
	// launch holds the launch verb's flags for the gh-actions path.
	launch *launchFlags
	all    *bool
	// kubeconfig and namespace locate the kubernetes runner's cluster.
	kubeconfig, namespace string
}

func newRunner(host substrates.Host) *cobra.Command {
	f := &runnerFlags{host: host}
	cmd := &cobra.Command{
		Use:   "runner",
		Short: "Run a local installation: launch, list, update and cancel sessions; fire the schedule",
		Long: `runner is the local substrate's runner, over an installation written by
autonomy compile PROFILE --target local --dir DIR. Agents run as processes (each in its own
process group, with a per-session log, killed at their timeout); people get a parked ask that
only its one-time token and evidence can complete. State lives in DIR/.autonomy/state/state.db
(SQLite), safe for many processes at once.

--dir defaults to $AUTONOMY_DIR, which every session has, else the current directory. A verb run
from inside a session ($AUTONOMY_SESSION set) acts for that session's actor and needs its
capability: launch agent:launch (agent:launch@x: only x), list/get/logs agent:list, update
agent:update, cancel agent:cancel. tick and serve are the operator's. A verb run by a process
inside a session (its descendant, or in its sandbox) without $AUTONOMY_SESSION, or naming
another session, is refused: it never acts as the operator (docs/local.md, "The wall"). Where a
session's jail keeps the store read-only (a preset's session in the installation root), its
shell's launch, list, get, update, cancel and logs are asked through the session's door and run
by its supervisor, as the session. mcp is the MCP server a preset's agent CLI starts for its
session.

--target gh-actions (the default where $AUTONOMY_SUBSTRATE says so, as the compiled job of an
actor holding agent:* does) is the GitHub runner inside a job: launch, get, list and cancel from
the job's environment (GITHUB_REPOSITORY, GITHUB_API_URL, GH_TOKEN, AUTONOMY_ACTOR) and the
installed manifest in the checkout, bounded by the calling actor's installed capabilities as
above (docs/gh-actions.md).

--target kubernetes is the runner of a fleet installed in a cluster (--kubeconfig, --namespace;
the standard kubeconfig loading rules otherwise): launch, get, list, cancel, pause, resume,
update and logs, each a read or write of the API server (docs/kubernetes.md).

Exit codes: 0 ok, 1 refused (denied, at capacity, unknown session, wrong token), 2 usage or I/O
error.`,
		Example: `  autonomy runner --dir . launch develop --ref 42
  autonomy runner list
  autonomy runner logs 7-k3qa -f
  autonomy runner update 8-k3qa --status done --token atk_… --evidence "PR #51 merged"
  autonomy runner serve`,
	}
	def := os.Getenv(local.DirEnv)
	if def == "" {
		def = "."
	}
	cmd.PersistentFlags().StringVar(&f.dir, "dir", def, "the installation directory")
	sub := os.Getenv(substrates.TargetEnv) // a compiled job that calls the runner sets it
	if sub == "" {
		sub = local.Name
	}
	cliflag.Target(cmd.PersistentFlags(), &f.substrate, sub, "local, or gh-actions: the GitHub runner, from a job's environment, or kubernetes: the runner of a cluster (default $"+substrates.TargetEnv+", else local; docs/gh-actions.md, docs/kubernetes.md)")
	cmd.PersistentFlags().StringVar(&f.kubeconfig, "kubeconfig", "", "--target kubernetes: the kubeconfig (default $KUBECONFIG, else ~/.kube/config, else the pod's own ServiceAccount in a cluster)")
	cmd.PersistentFlags().StringVar(&f.namespace, "namespace", "", "--target kubernetes: the fleet's namespace (default the kubeconfig context's, else the pod's, else autonomy)")
	cmd.AddCommand(newRunnerLaunch(f), newRunnerGet(f), newRunnerList(f), newRunnerUpdate(f), newRunnerCancel(f),
		withTranscript(f, newRunnerLogs(f)), newRunnerTick(f), newRunnerServe(f), newRunnerSupervise(f), newRunnerUsage(f), newRunnerMCP(f), newRunnerGH(f), newRunnerBun(f),
		newRunnerPause(f), newRunnerResume(f), newRunnerSession(f), newRunnerModelProxy(f))
	completeRunner(cmd, f)
	return cmd
}

// open opens the runner of the installation, as the calling session when there is one.
func (f *runnerFlags) open() (*local.Runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, exitcode.Usagef("cannot find the autonomy binary: %v", err)
	}
	r, err := local.New(f.dir, local.Options{Session: os.Getenv(local.SessionEnv), State: os.Getenv(local.StateEnv), Confine: true, Detach: true, Exe: exe, Playbooks: runtimes.Host{}})
	if err != nil {
		return nil, runnerError(err)
	}
	return r, nil
}

// with makes a RunE that checks --format (when the verb has it), opens the runner, runs fn and
// closes the runner.
func (f *runnerFlags) with(formats bool, fn func(cmd *cobra.Command, args []string, r *local.Runner) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if formats {
			if err := exitcode.CheckFormat(f.format, "text", "json"); err != nil {
				return err
			}
		}
		if done, err := f.viaSubstrate(cmd, args); done {
			return err
		}
		if done, err := f.viaDoor(cmd, args); done {
			return err
		}
		r, err := f.open()
		if err != nil {
			return err
		}
		defer r.Close()
		return fn(cmd, args, r)
	}
}

// viaSubstrate runs the verb through --target's own runner verbs when that substrate has them
// (substrates.RunnerVerbs: gh-actions, inside a job); done is false for the local runner, whose
// verbs are this file's.
func (f *runnerFlags) viaSubstrate(cmd *cobra.Command, args []string) (done bool, err error) {
	s, ok := f.host.Lookup(f.substrate)
	if !ok {
		return true, exitcode.Usagef("--target %q: one of %s", f.substrate, strings.Join(f.host.Names(), ", "))
	}
	v, ok := s.(substrates.RunnerVerbs)
	if !ok {
		if s.Name() == local.Name {
			if f.kubeconfig != "" || f.namespace != "" {
				return true, exitcode.Usagef("--kubeconfig and --namespace are for --target kubernetes, not the local runner")
			}
			return false, nil
		}
		return true, exitcode.Usagef("--target %s: its runner has no verbs on the command line", s.Name())
	}
	call := substrates.RunnerCall{Verb: cmd.Name(), Args: args, Format: f.format, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr(),
		Kubeconfig: f.kubeconfig, Namespace: f.namespace}
	if cmd.Flags().Changed("dir") || cmd.InheritedFlags().Changed("dir") {
		call.Dir = f.dir
	}
	if f.all != nil {
		call.All = *f.all
	}
	// The flags of logs and update, where the verb has them (a missing flag reads as zero).
	call.Follow, _ = cmd.Flags().GetBool("follow")
	call.Status, _ = cmd.Flags().GetString("status")
	call.Token, _ = cmd.Flags().GetString("token")
	call.Evidence, _ = cmd.Flags().GetString("evidence")
	call.NewToken, _ = cmd.Flags().GetBool("new-token")
	if call.Verb == "launch" {
		if call.Params, err = f.launch.parse(); err != nil {
			return true, err
		}
		req := f.launch.req
		call.Ref, call.Text, call.From, call.Kind, call.Branch = req.Ref, req.Text, req.From, req.Kind, req.Branch
	}
	return true, v.RunVerb(cmd.Context(), call)
}

// unrecorded says whether err is a *local.UnrecordedError: what list or get printed is stale.
func unrecorded(err error) bool {
	var u *local.UnrecordedError
	return errors.As(err, &u)
}

// stale is the exit of a list or get that printed what the store has (err nil, or an
// *local.UnrecordedError): 2, saying which sessions ended unrecorded, when the store could not
// be written.
func stale(err error) error {
	var u *local.UnrecordedError
	if !errors.As(err, &u) {
		return nil
	}
	safe := &local.UnrecordedError{}
	for _, n := range u.Notes {
		safe.Notes = append(safe.Notes, cliout.TerminalSafe(n)) // a reason may quote the agent
	}
	return &exitcode.Error{Code: exitcode.Usage, Msg: safe.Error()}
}

// runnerError maps a runner error to an exit code: a refusal is 1, anything else 2.
func runnerError(err error) error {
	var denied *local.DeniedError
	var refused *local.RefusedError
	if errors.As(err, &denied) {
		return &exitcode.Error{Code: exitcode.Problems, Msg: "denied: " + denied.Msg}
	}
	if errors.As(err, &refused) {
		return &exitcode.Error{Code: exitcode.Problems, Msg: refused.Msg}
	}
	return &exitcode.Error{Code: exitcode.Usage, Msg: err.Error()}
}

func newRunnerLaunch(f *runnerFlags) *cobra.Command {
	var req local.LaunchRequest
	lf := &launchFlags{}
	hf := &handoffFlags{}
	f.launch = lf
	cmd := &cobra.Command{
		Use:   "launch ACTOR [--param K=V]... [--ref R] [--from A] [--text T] [--kind K] [--branch B]",
		Short: "Start an agent, or engage a person, and print the session id",
		Long: `launch starts a session of ACTOR and prints its id (for a person, also the one-time redeem
token, shown only this once). The firing context maps onto the params the actor declares:
--ref is subject.ref, --from subject.actor (default: your user name, or the launching session's
actor), --text subject.text, --kind trigger.kind (default dispatch); subject.actorRole is OWNER
for you and NONE for a session. --param K=V sets a declared param verbatim. From inside a
session (AUTONOMY_SESSION set), --from another actor and a --param bound to subject.actor or
subject.actorRole are refused: only the runner sets those for a session.

An agent session runs in the installation root, or in a git worktree of its own under
.autonomy/worktrees when the actor's workspace is isolated or --branch is given. Launch refuses
(exit 1) when maxConcurrent agent sessions are already running.

An ask to a person may be typed (the standard's handoff): --type approve, decide, consult or
inform, with --in (what you hand over), --question and --option (the decision; decide needs two
or more options, approve defaults to approve and reject) and --out (what the person is to hand
back). Without --type the ask is untyped, as before types. docs/local.md, "Typed asks".`,
		Example: `  autonomy runner launch develop --ref 42
  autonomy runner launch reviewer --param PR=51 --branch feature/login
  autonomy runner launch maintainer --ref 42 --text "approve the migration?" --format json
  autonomy runner launch maintainer --type decide --in "two designs fit" --question "which one?" --option A --option B`,
		Args: cobra.ExactArgs(1),
		RunE: f.with(true, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			req.Actor = args[0]
			var err error
			if req.Params, err = lf.parse(); err != nil {
				return err
			}
			if req.Handoff, err = hf.spec(cmd); err != nil {
				return err
			}
			res, err := r.Launch(cmd.Context(), req)
			if err != nil && res.Session.ID == "" {
				return runnerError(err)
			}
			if warn := r.NoModelCredential(res.Session.Actor); warn != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "autonomy: warning:", warn)
			}
			out := cmd.OutOrStdout()
			if f.format == "json" {
				v := struct {
					Session local.SessionView `json:"session"`
					Token   string            `json:"token,omitempty"`
				}{local.View(res.Session), res.Token}
				if e := cliout.WriteJSON(out, v); e != nil {
					return e
				}
			} else {
				fmt.Fprintln(out, res.Session.ID)
				if res.Token != "" {
					fmt.Fprintln(out, res.Token)
					fmt.Fprintf(cmd.ErrOrStderr(), "autonomy: %s is an ask to %s; the second line is its one-time redeem token, shown only now: whoever resolves the ask needs it\n", res.Session.ID, res.Session.Actor)
				}
			}
			if err != nil {
				return runnerError(err)
			}
			return nil
		}),
	}
	cmd.Flags().StringArrayVar(&lf.params, "param", nil, "set a declared param: NAME=VALUE (repeatable)")
	cmd.Flags().StringVar(&lf.paramsJSON, "params-json", "", `set declared params from a JSON object of strings: {"ISSUE":"42"}`)
	lf.req = &req
	cmd.Flags().StringVar(&req.Ref, "ref", "", "subject.ref: the work item")
	cmd.Flags().StringVar(&req.From, "from", "", "subject.actor: who asked")
	cmd.Flags().StringVar(&req.Text, "text", "", "subject.text: the text that fired it")
	cmd.Flags().StringVar(&req.Kind, "kind", "", "trigger.kind (default dispatch)")
	cmd.Flags().StringVar(&req.Branch, "branch", "", "run in a git worktree of this branch (created from HEAD if new)")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text or json")
	hf.add(cmd)
	return cmd
}

func newRunnerGet(f *runnerFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show one session",
		Long: `get shows one session, then its last 20 events, oldest first: queued and dequeued (it waited
for the installation root), worktree (what became of its worktree: removed, kept with uncommitted
changes, its commits saved on a branch), orphaned (its supervisor died), ended, and others.
--format json has them as "events". When the session ended but the store could not be written
to record it (a full disk), get prints it as the store has it and exits 2, saying how it ended.`,
		Example: `  autonomy runner get 7-k3qa`,
		Args:    cobra.ExactArgs(1),
		RunE: f.with(true, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			s, ok, err := r.Get(cmd.Context(), args[0])
			if err != nil && !unrecorded(err) {
				return runnerError(err)
			}
			if !ok {
				return exitcode.Problemf("%s", local.NoSession(args[0]))
			}
			rec, err2 := r.Handoff(cmd.Context(), s.ID)
			if err2 != nil {
				return runnerError(err2)
			}
			weave := sessionWeave(cmd.Context(), r, s.ID)
			events, more := sessionEvents(cmd.Context(), r, s.ID)
			if f.format == "json" {
				if e := cliout.WriteJSON(cmd.OutOrStdout(), struct {
					local.SessionView
					Handoff  *handoff.Record `json:"handoff,omitempty"`
					Usage    any             `json:"usage,omitempty"`
					Overlays *weaveView      `json:"overlays,omitempty"`
					Proposal *store.Proposal `json:"proposal,omitempty"`
					Events   []eventView     `json:"events"`
				}{local.View(s), rec, sessionUsage(r, cmd, s.ID), weave, sessionProposal(cmd.Context(), r, s.ID), events}); e != nil {
					return e
				}
				return stale(err)
			}
			printSession(cmd.OutOrStdout(), s)
			printHandoff(cmd.OutOrStdout(), rec)
			printSessionUsage(cmd.OutOrStdout(), r, cmd, s.ID)
			printWeave(cmd.OutOrStdout(), weave)
			printProposal(cmd.OutOrStdout(), sessionProposal(cmd.Context(), r, s.ID))
			printEvents(cmd.OutOrStdout(), events, more)
			return stale(err)
		}),
	}
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text or json")
	return cmd
}

func newRunnerList(f *runnerFlags) *cobra.Command {
	var all bool
	f.all = &all
	cmd := &cobra.Command{
		Use:   "list [--all]",
		Short: "List the sessions in flight (with --all, every session)",
		Example: `  autonomy runner list
  autonomy runner list --all`,
		Args: cobra.NoArgs,
		RunE: f.with(true, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			ss, err := r.List(cmd.Context(), all)
			if err != nil && !unrecorded(err) {
				return runnerError(err)
			}
			out := cmd.OutOrStdout()
			if f.format == "json" {
				views := make([]local.SessionView, 0, len(ss))
				for _, s := range ss {
					v := local.View(s)
					v.WaitingFor = r.Awaited(cmd.Context(), s)
					views = append(views, v)
				}
				if e := cliout.WriteJSON(out, struct {
					Sessions  []local.SessionView `json:"sessions"`
					Proposals []store.Proposal    `json:"proposals"`
					Paused    []store.Throttle    `json:"paused,omitempty"`
				}{views, listProposals(cmd.Context(), r, all), throttles(cmd.Context(), r)}); e != nil {
					return e
				}
				return stale(err)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tACTOR\tKIND\tSTATUS\tSINCE\tREF\tWAITING FOR")
			for _, s := range ss {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Actor, s.Kind, local.ListStatus(s), s.CreatedAt.Format("2006-01-02 15:04:05"), cliout.TerminalSafe(s.Ref), cliout.TerminalSafe(r.WaitingFor(cmd.Context(), s)))
			}
			if e := tw.Flush(); e != nil {
				return e
			}
			if e := printProposals(out, listProposals(cmd.Context(), r, all)); e != nil {
				return e
			}
			printThrottles(out, throttles(cmd.Context(), r))
			return stale(err)
		}),
	}
	cmd.Flags().BoolVar(&all, "all", false, "include ended sessions")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text or json")
	return cmd
}

func newRunnerCancel(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a session (TERM, then KILL, to its process group) or retract an ask",
		Long: `cancel records the session cancelled, sends TERM to its process group and returns at once.
Its supervisor KILLs whatever is left of the group after policy.box.local.graceSeconds, however
this command ends; if the supervisor died, the next list, get, logs -f or tick does.`,
		Example: `  autonomy runner cancel 7-k3qa`,
		Args:    cobra.ExactArgs(1),
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			ok, err := r.Cancel(cmd.Context(), args[0])
			if err != nil {
				return runnerError(err)
			}
			if !ok {
				s, found, _ := r.Store.Get(cmd.Context(), args[0])
				if !found {
					return exitcode.Problemf("%s", local.NoSession(args[0]))
				}
				return exitcode.Problemf("session %s had already ended: %s", s.ID, s.Status)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s cancelled\n", args[0])
			return nil
		}),
	}
}

func newRunnerLogs(f *runnerFlags) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs ID [-f]",
		Short: "Print a session's output; -f follows it until the session ends",
		Long: `logs prints a session's output. Its log keeps the last policy.box.local.logMaxBytes of it
(10 MiB by default); when earlier output was dropped, the first line says how many bytes.`,
		Args: cobra.ExactArgs(1),
		RunE: f.with(false, func(cmd *cobra.Command, args []string, r *local.Runner) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := r.FollowLogs(ctx, args[0], follow, cmd.OutOrStdout()); err != nil {
				return runnerError(err)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the session ends")
	return cmd
}

// newRunnerSupervise is the detached process that runs one session to its end.
func newRunnerSupervise(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise ID",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Nothing its launcher inherited (a shell's 7>file) reaches the session's process.
			_ = proc.SealInherited()
			r, err := local.New(f.dir, local.Options{Detach: true, Playbooks: runtimes.Host{}})
			if err != nil {
				return runnerError(err)
			}
			defer r.Close()
			if err := r.Supervise(context.Background(), args[0]); err != nil {
				return runnerError(err)
			}
			return nil
		},
	}
}

func printSession(w io.Writer, s store.Session) {
	v := local.View(s)
	line := func(k, val string) {
		if val != "" {
			fmt.Fprintf(w, "%-10s %s\n", k+":", cliout.TerminalSafe(val))
		}
	}
	line("id", v.ID)
	line("actor", v.Agent)
	line("kind", v.Kind)
	line("status", string(v.Status))
	line("ref", v.Ref)
	line("trigger", v.Trigger)
	line("origin", v.Origin)
	line("branch", v.Branch)
	line("workdir", v.Workdir)
	line("created", v.Created)
	line("started", v.Started)
	line("ended", v.Ended)
	if v.ExitCode != nil {
		line("exit", fmt.Sprint(*v.ExitCode))
	}
	line("reason", v.Reason)
	line("verified", v.Verified)
	line("evidence", v.Evidence)
	line("resolved", v.ResolvedBy)
	line("log", v.Log)
	for _, k := range cliout.SortedKeys(v.Params) {
		fmt.Fprintf(w, "param:     %s=%q\n", k, v.Params[k])
	}
}
