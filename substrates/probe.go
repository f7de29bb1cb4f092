package substrates

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

// The runtime half of a substrate is optional interfaces, found by type assertion (as Layout
// is): a substrate implements those its runtime has. conformance and cmd/autonomy reach them
// through the registry, never by a substrate's name.

// Prober is implemented by a substrate whose runners the conformance battery probes.
type Prober interface {
	// ProbeTargets lists the substrate's runners under test. A runner that needs what env does
	// not give (a remote to probe against) is listed with Skip saying how to run it.
	ProbeTargets(env ProbeEnv) ([]ProbeTarget, error)
}

// Realizer is implemented by a substrate whose compiled output the conformance battery can
// read back: the support matrix verifies each declaration with it.
type Realizer interface {
	// Realized checks that out, the compile of a probe profile of feature (conformance.Features),
	// realizes the feature: it reads the generated files the way the substrate's runtime will,
	// independently of what Support declares.
	Realized(feature string, out Output) error
}

// ProbeEnv is what the conformance battery gives a substrate to set up its runners under test.
type ProbeEnv struct {
	// CompileFleet writes the probe fleet (conformance/probe) under scratch and compiles it for
	// the substrate, returning the profile's directory and the Output.
	CompileFleet func(scratch string) (profile string, out Output, err error)
	// Actors are the probe fleet's actors.
	Actors []string
	// Params are what the battery launches with; ProbeSubject.Seen reports them as the process
	// saw them.
	Params ir.LaunchParams
	// Remote is where a runner that is not on this machine is probed (`conformance --repo`, an
	// OWNER/NAME); empty, such runners are listed as not run.
	Remote string
	// Exe, when set, is the autonomy binary: a runner may read a session back through another
	// process of it, so the get check proves the session is kept outside the launcher's memory.
	Exe string
}

// ProbeTarget is a runner under test: its name, its substrate, and how to set up a fresh
// ProbeSubject.
type ProbeTarget struct {
	Name      string `json:"name"`
	Substrate string `json:"substrate"`
	// Human is set when the target's subjects launch a person's ask.
	Human bool `json:"human,omitempty"`
	// Remote is set when the target runs only against ProbeEnv.Remote.
	Remote bool `json:"-"`
	// Skip, when set, says why the target is not run (e.g. no repository given for GitHub).
	Skip string                                           `json:"-"`
	New  func(ctx context.Context) (*ProbeSubject, error) `json:"-"`
}

// ProbeGetter gets a session by id, as ir.Runner's Get.
type ProbeGetter func(ctx context.Context, id string) (ir.Session, bool, error)

// ProbeSubject is one runner under test, freshly set up: every check gets its own, so that no
// check sees another's sessions.
type ProbeSubject struct {
	Runner ir.Runner
	// Actor is the actor the core checks launch: it takes the battery's params, and stays in
	// flight until cancelled (an agent that waits, or a person's ask).
	Actor string
	// Human is set when Actor is a person: the human seam's checks apply instead of an agent's.
	Human bool

	// The hooks of expanded checks; a nil hook leaves its check not probed, with NotProbed's
	// reason.
	// Seen returns the params as the launched process saw them in its environment: every one the
	// probe script reports (nil until it has).
	Seen func(ctx context.Context, id string) (map[string]string, error)
	// Timeout names an actor that outlives its timeout, and how long to wait for it to be stopped.
	Timeout     string
	TimeoutWait time.Duration
	// MaxConcurrent is the fleet's cap on running agents, which Actor counts against (0: none).
	MaxConcurrent int
	// Isolated names an actor with an isolated workspace; Workspace reports where a session of it
	// ran, the shared root, and whether its workspace is gone now.
	Isolated  string
	Workspace func(ctx context.Context, id string) (ran, root string, gone bool, err error)
	// GetFresh, when set, gets a session as a process that did not launch it does (another
	// autonomy process, or a runner with nothing in memory): the get check asks it, so the params
	// must come back from where the runner keeps them, not from the launcher's memory.
	GetFresh ProbeGetter
	// Simulate registers a human simulator's fixtures (the YAML of a fixtures file) for the
	// subject's person, and returns the tick that answers the simulated asks that came due.
	Simulate func(ctx context.Context, fixtures string) (tick func(context.Context) error, err error)
	// Fire launches actor as its dispatch trigger fires, with the firing context f: as the
	// operator, or with f.Session from inside that session (as a process of it calls the runner).
	// The behavioral checks of the param sources and of scoped capabilities use it. An error is
	// the runner's refusal, unless it wraps ErrNotTried.
	Fire func(ctx context.Context, actor string, f Firing) (ir.Session, error)
	// SessionNotProbed, when set, says why Fire launches as the operator only: the checks that
	// launch from inside a session are then not probed, for this reason.
	SessionNotProbed string
	// ScopeLauncher, when set, names the actor holding agent:launch@Actor the session checks
	// launch from (scope-refused even with SessionNotProbed set): Fire with a Session is then the
	// substrate's trusted side applying a launch the session asked for (GitHub's apply job). ""
	// is the probe fleet's launcher, when sessions launch.
	ScopeLauncher string
	// Dispatcher, when set, is who an operator's launch runs as: the runner takes subject.actor
	// (and actorRole) from who dispatched, never from Firing.From, which must not reach the
	// process. "" takes subject.actor from Firing.From.
	Dispatcher string
	// DispatchKind, when set, is trigger.kind for an operator's dispatch as the substrate names
	// it (GitHub: its event_name, workflow_dispatch); "" is dispatch.
	DispatchKind string
	// SeenFrom, when set, says where Seen's params come from when not from the launched
	// process's own report (e.g. the job's env computed from the workflow and the run's facts).
	SeenFrom string
	// TickAt runs the trigger executor once at now, on a fake clock, and returns the sessions it
	// launched: the cron check ticks before, at and after the minute of the probe fleet's cron
	// actor (conformance/probe, in UTC).
	TickAt func(ctx context.Context, now time.Time) ([]ir.Session, error)
	// Schedule, for a runner without TickAt whose scheduler is not observable (GitHub's),
	// reports what it holds for actor: the cron expressions its scheduler is given, and the
	// params a scheduled firing gives the actor's process (nil when such a firing starts
	// nothing). ScheduleKind is trigger.kind of that firing as the substrate names it ("" is cron).
	Schedule     func(ctx context.Context, actor string) (crons []string, fired map[string]string, err error)
	ScheduleKind string
	// AsSession returns the runner as a process inside session id calls it: authorized against
	// that session's actor's capabilities.
	AsSession func(ctx context.Context, id string) (ir.Runner, error)
	// Result names an actor with a result schema that exits 0, writing a result the schema
	// accepts only when launched with PROBE_REF "valid"; "" when the runner cannot tell.
	Result string
	// Prelaunch names an actor whose prelaunch command fails when launched with PROBE_REF "fail",
	// and otherwise leaves the session's id where its process reports it to Seen as
	// PROBE_PRELAUNCH; "" when the runner has no prelaunch.
	Prelaunch string
	// Proposer names an actor holding code:propose, reviewed by another actor: launched with
	// PROBE_REF "plain" it changes an ordinary path, with "human" a path of
	// policy.box.risk.human_required_paths; its reviewer approves the change unless PROBE_TEXT
	// is "reject". Proposal reports what became of the change a session of it proposed.
	Proposer string
	Proposal func(ctx context.Context, session string) (ProposalView, error)
	// MergeNotProbed, when set, says why the merge-boundary check is not probed without
	// Proposal ("" is NotProbed's reason).
	MergeNotProbed string
	// NotProbed says why a nil hook's check cannot be observed on this runner.
	NotProbed string
	// TickFrom, when set, says what a tick of TickAt runs when it is not the runner's own trigger
	// executor (e.g. the CronJob controller's firing, replayed on the fake clock from the
	// CronJob the API server holds); the cron check says so in what it observed.
	TickFrom string
	// RunsBy, when set, says what ran a launched session's process when the runner does not run
	// it itself (e.g. a cluster whose kubelet runs no container); the checks that watch the
	// process say so in what they observed.
	RunsBy string

	// Close releases the subject (its runner, its installation).
	Close func()
}

// ErrNotTried is wrapped by a ProbeSubject.Fire error when the launch could not be tried (the
// subject's own machinery failed): it is no refusal, and a check expecting one fails.
var ErrNotTried = errors.New("the launch could not be tried")

// ProposalView is what became of a proposed change.
type ProposalView struct {
	// State is "" while the change is under review, then "merged", "refused", or "waiting" for
	// a person's verified act.
	State string
	// By is the actor whose verdict decided it ("" when none did).
	By string
	// How, when set, says what the substrate showed of the decision (the check quotes it).
	How string
}

// Firing is the context a trigger fires with: what the param sources resolve from.
type Firing struct {
	// Session, when set, is the session in flight the launch is made from; "" is the operator.
	Session string
	// Ref, From, Text and Kind are subject.ref, subject.actor, subject.text and trigger.kind as
	// the launch gives them ("" leaves each to the runner).
	Ref, From, Text, Kind string
	// Params set declared params by name, verbatim.
	Params ir.LaunchParams
}

// File returns the data of the file of out at path.
func (out Output) File(path string) ([]byte, error) {
	for _, f := range out.Files {
		if f.Path == path {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("%s was not generated", path)
}
