package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// Tier says whether the standard requires a check.
type Tier string

// The two tiers: core checks every runner must pass; expanded ones a runner may support.
const (
	Core     Tier = "core"
	Expanded Tier = "expanded"
)

// Outcome is what a check found. A core check passes or fails; an expanded one finds the feature
// supported or unsupported, or fails when the runner takes the call but gets it wrong. A check the
// subject cannot be observed for is not probed, and says why.
type Outcome string

// The outcomes.
const (
	Pass        Outcome = "pass"
	Fail        Outcome = "fail"
	Supported   Outcome = "supported"
	Unsupported Outcome = "unsupported"
	NotProbed   Outcome = "not probed"
)

// Subject is one runner under test (substrates.ProbeSubject).
type Subject = substrates.ProbeSubject

// Target is a runner under test (substrates.ProbeTarget).
type Target = substrates.ProbeTarget

// Getter gets a session by id (substrates.ProbeGetter).
type Getter = substrates.ProbeGetter

// Check is one row of the battery.
type Check struct {
	Name string
	Tier Tier
	// Doc says what it probes, for the report.
	Doc string
	// For is "agent", "human" or "" (both).
	For string
	// Features are the support matrix's rows the check observes: a pass observes them on the
	// target's substrate (Observe).
	Features []string
	run      func(ctx context.Context, s *Subject) (Outcome, string)
	// observe, in place of run, also says what it observed.
	observe func(ctx context.Context, s *Subject) (outcome Outcome, reason, observed string)
}

// Result is one check run against one target.
type Result struct {
	Target  string  `json:"target"`
	Check   string  `json:"check"`
	Tier    Tier    `json:"tier"`
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
	// Observed says what a passing check saw the runner do.
	Observed string `json:"observed,omitempty"`
}

// Params are what the core checks launch with: every character a careless runner would mangle.
var Params = ir.LaunchParams{
	"PROBE_REF":  "42",
	"PROBE_TEXT": "it's \"quoted\" $(whoami) `id` ${{ github.token }} \\n\nsecond line ✓",
}

// Checks is the battery, in report order.
var Checks = []Check{
	{Name: "launch", Tier: Core, Features: []string{"trigger:dispatch"}, Doc: "launch returns a running session with an id", run: checkLaunch},
	{Name: "distinct-ids", Tier: Core, Doc: "two launches get distinct ids", run: checkDistinct},
	{Name: "params-verbatim", Tier: Core, Doc: "the session's params come back verbatim", run: checkVerbatim},
	{Name: "list", Tier: Core, Doc: "list shows both sessions in flight", run: checkList},
	{Name: "cancel", Tier: Core, Doc: "cancel returns true, then false once the session ended", run: checkCancel},
	{Name: "cancel-leaves-list", Tier: Core, Doc: "a cancelled session leaves list", run: checkCancelLeaves},
	{Name: "cron-fires", Tier: Core, For: "agent", Features: []string{"trigger:cron", "source:trigger.kind"}, Doc: "on a fake clock, a cron trigger (17 6 * * *) fires nothing at 06:16:59, launches its actor once at 06:17:00 and not again within the minute; the process sees trigger.kind cron", observe: checkCron},
	{Name: "get", Tier: Expanded, Doc: "get returns the session with its agent and params (read back by another process where the runner offers one); an unknown id is not found", run: checkGet},
	{Name: "pause-resume", Tier: Expanded, For: "agent", Doc: "update pauses and resumes a session", run: checkPause},
	{Name: "max-concurrent", Tier: Expanded, For: "agent", Features: []string{"policy:maxConcurrent"}, Doc: "a launch beyond policy.maxConcurrent is refused", run: checkMax},
	{Name: "timeout", Tier: Expanded, For: "agent", Features: []string{"field:timeout"}, Doc: "a session that outlives its timeout is stopped and fails", run: checkTimeout},
	{Name: "isolation", Tier: Expanded, For: "agent", Features: []string{"field:execution"}, Doc: "an isolated actor runs in a workspace of its own, removed when it ends", run: checkIsolation},
	{Name: "params-env", Tier: Expanded, For: "agent", Doc: "the params arrive verbatim in the launched process's environment", run: checkEnv},
	{Name: "param-sources", Tier: Expanded, For: "agent", Features: []string{"trigger:dispatch", "source:subject.ref", "source:subject.text", "source:subject.actor", "source:subject.actorRole", "source:trigger.kind"},
		Doc: "the operator dispatches with a subject: subject.ref, subject.text, subject.actor, subject.actorRole (not NONE) and trigger.kind (dispatch) reach the process", observe: checkSources},
	{Name: "session-sources", Tier: Expanded, For: "agent", Features: []string{"source:subject.actor", "source:subject.actorRole"},
		Doc: "from inside a session, setting subject.actorRole or subject.actor is refused and starts nothing; its launch reaches the process with the calling actor and NONE", observe: checkSessionSources},
	{Name: "scope-refused", Tier: Expanded, For: "agent", Features: []string{"capability:agent:launch", "capability:@scope"},
		Doc: "a session with agent:launch@probe launches probe and is refused another actor; one without agent:launch is refused; a refused launch starts nothing", observe: checkScope},
	{Name: "agent-verbs", Tier: Expanded, For: "agent", Features: []string{"capability:agent:list", "capability:agent:update", "capability:agent:cancel"},
		Doc: "from inside a session without agent:list, agent:update or agent:cancel, list, get, update and cancel are refused and change nothing; with them, they list, pause, resume and cancel", observe: checkVerbs},
	{Name: "result-validated", Tier: Expanded, For: "agent", Features: []string{"field:result"},
		Doc: "an actor with a result schema that exits 0 is done with a result the schema accepts and failed with one it refuses", observe: checkResult},
	{Name: "capabilities-carried", Tier: Expanded, For: "agent", Features: []string{"capability:tasks:author", "capability:tasks:converse"},
		Doc: "an actor's process is told its capabilities (AUTONOMY_CAPABILITIES)", observe: checkCarried},
	{Name: "prelaunch", Tier: Expanded, For: "agent", Features: []string{"field:prelaunch"},
		Doc: "an actor's prelaunch runs in its workspace before its process; a failing one fails the session, whose process never starts", observe: checkPrelaunch},
	{Name: "merge-boundary", Tier: Expanded, For: "agent", Features: []string{"field:review", "capability:code:propose", "capability:code:review"},
		Doc: "a proposer's change merges only on its reviewer's approval, never its own; a rejected one is refused; one to a human-required path waits for a person", observe: checkMerge},
	{Name: "never-done-by-itself", Tier: Expanded, For: "human", Features: []string{"kind:human"}, Doc: "a person's session stays running: nothing marks it done by itself", run: checkNeverDone},
	{Name: "done-by-verified-act", Tier: Expanded, For: "human", Features: []string{"kind:human"}, Doc: "done only with the redeem token and evidence; without them refused and unchanged", run: checkVerifiedAct},
	{Name: "simulated-person", Tier: Expanded, For: "human", Doc: "a human simulator's fixtures answer an ask through its redeem token (recorded as the simulator's); a never fixture leaves it open", run: checkSimulated},
}

// Run runs every check that applies against each target, each on a fresh subject.
func Run(ctx context.Context, targets []Target) []Result {
	return run(ctx, targets, Checks)
}

// RunChecks is Run with only the checks named (a substrate's tests of a broken realization run
// the one check that must catch it).
func RunChecks(ctx context.Context, targets []Target, names ...string) []Result {
	var only []Check
	for _, c := range Checks {
		if slices.Contains(names, c.Name) {
			only = append(only, c)
		}
	}
	return run(ctx, targets, only)
}

func run(ctx context.Context, targets []Target, checks []Check) []Result {
	var rs []Result
	for _, t := range targets {
		kind := "" // the kind of actor t's subjects launch, once one was set up
		for _, c := range checks {
			r := Result{Target: t.Name, Check: c.Name, Tier: c.Tier}
			if t.Skip != "" {
				if c.For != "" && (c.For == "human") != t.Human {
					continue
				}
				r.Outcome, r.Reason = NotProbed, t.Skip
				rs = append(rs, r)
				continue
			}
			if kind != "" && c.For != "" && c.For != kind {
				continue // does not apply to this kind of actor: no subject is set up for it
			}
			r.Outcome, r.Reason, r.Observed = runCheck(ctx, t, c, &kind)
			if r.Outcome == "" {
				continue // does not apply to this kind of actor
			}
			rs = append(rs, r)
		}
	}
	return rs
}

// runCheck runs c on a fresh subject of t, and sets kind to the kind of actor the subject
// launches ("agent" or "human"); it returns no outcome when c does not apply to that kind. A
// pass observed what the check's Doc says, unless the check says more.
func runCheck(ctx context.Context, t Target, c Check, kind *string) (o Outcome, reason, observed string) {
	s, err := t.New(ctx)
	if err != nil {
		return Fail, fmt.Sprintf("setting up %s: %v", t.Name, err), ""
	}
	defer s.Close()
	*kind = "agent"
	if s.Human {
		*kind = "human"
	}
	if c.For != "" && c.For != *kind {
		return "", "", ""
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if c.observe != nil {
		o, reason, observed = c.observe(ctx, s)
	} else {
		o, reason = c.run(ctx, s)
	}
	if (o == Pass || o == Supported) && observed == "" {
		observed = c.Doc
	}
	return o, reason, observed
}

// ok is the passing outcome of a tier.
func ok(t Tier) Outcome {
	if t == Core {
		return Pass
	}
	return Supported
}

// verdict turns a check's error into its outcome: nil passes, an ir.ErrUnsupported from the runner
// is unsupported, anything else fails.
func verdict(tier Tier, err error) (Outcome, string) {
	switch {
	case err == nil:
		return ok(tier), ""
	case errors.Is(err, ir.ErrUnsupported) && tier == Expanded:
		return Unsupported, err.Error()
	}
	return Fail, err.Error()
}

func launch(ctx context.Context, s *Subject, actor string) (ir.Session, error) {
	sess, err := s.Runner.Launch(ctx, actor, maps.Clone(Params))
	if err != nil {
		return sess, fmt.Errorf("launch %s: %w", actor, err)
	}
	if sess.ID == "" {
		return sess, fmt.Errorf("launch %s returned a session without an id", actor)
	}
	return sess, nil
}

func launchTwo(ctx context.Context, s *Subject) (a, b ir.Session, err error) {
	if a, err = launch(ctx, s, s.Actor); err != nil {
		return a, b, err
	}
	b, err = launch(ctx, s, s.Actor)
	return a, b, err
}

func listed(ctx context.Context, s *Subject) (map[string]ir.Session, error) {
	ss, err := s.Runner.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	m := map[string]ir.Session{}
	for _, x := range ss {
		m[x.ID] = x
	}
	return m, nil
}

// eventually polls cond every 50 ms until it holds, the context ends or wait passes.
func eventually(ctx context.Context, wait time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(wait)
	for {
		done, err := cond()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not after %s", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func checkLaunch(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err == nil && sess.Status != ir.Running {
		err = fmt.Errorf("the launched session is %q, not running", sess.Status)
	}
	if err == nil && sess.Agent != s.Actor {
		err = fmt.Errorf("the launched session's agent is %q, not %q", sess.Agent, s.Actor)
	}
	return verdict(Core, err)
}

func checkDistinct(ctx context.Context, s *Subject) (Outcome, string) {
	a, b, err := launchTwo(ctx, s)
	if err == nil && a.ID == b.ID {
		err = fmt.Errorf("both launches got id %q", a.ID)
	}
	return verdict(Core, err)
}

func checkVerbatim(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err == nil {
		err = sameParams("launch returned", sess.Params)
	}
	return verdict(Core, err)
}

func sameParams(what string, got ir.LaunchParams) error {
	for k, v := range Params {
		if got[k] != v {
			return fmt.Errorf("%s %s=%q, launched with %q", what, k, got[k], v)
		}
	}
	return nil
}

func checkList(ctx context.Context, s *Subject) (Outcome, string) {
	a, b, err := launchTwo(ctx, s)
	if err == nil {
		var m map[string]ir.Session
		if m, err = listed(ctx, s); err == nil {
			for _, x := range []ir.Session{a, b} {
				if _, in := m[x.ID]; !in {
					err = fmt.Errorf("list does not show session %s", x.ID)
				}
			}
		}
	}
	return verdict(Core, err)
}

func checkCancel(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err != nil {
		return verdict(Core, err)
	}
	ok, err := s.Runner.Cancel(ctx, sess.ID)
	if err == nil && !ok {
		err = fmt.Errorf("cancel of a running session returned false")
	}
	if err == nil {
		if ok, err = s.Runner.Cancel(ctx, sess.ID); err == nil && ok {
			err = fmt.Errorf("a second cancel of the same session returned true")
		}
	}
	return verdict(Core, err)
}

func checkCancelLeaves(ctx context.Context, s *Subject) (Outcome, string) {
	a, b, err := launchTwo(ctx, s)
	if err != nil {
		return verdict(Core, err)
	}
	if _, err := s.Runner.Cancel(ctx, a.ID); err != nil {
		return verdict(Core, fmt.Errorf("cancel: %w", err))
	}
	m, err := listed(ctx, s)
	if err == nil {
		if _, in := m[a.ID]; in {
			err = fmt.Errorf("list still shows the cancelled session %s", a.ID)
		} else if _, in := m[b.ID]; !in {
			err = fmt.Errorf("list lost the other session %s", b.ID)
		}
	}
	return verdict(Core, err)
}

func checkGet(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err != nil {
		return verdict(Expanded, err)
	}
	get := s.Runner.Get
	if s.GetFresh != nil {
		get = s.GetFresh
	}
	got, found, err := get(ctx, sess.ID)
	switch {
	case err != nil:
	case !found:
		err = fmt.Errorf("get %s: not found", sess.ID)
	case got.ID != sess.ID || got.Agent != s.Actor || got.Status != ir.Running:
		err = fmt.Errorf("get %s returned %s of %q, %s", sess.ID, got.ID, got.Agent, got.Status)
	default:
		err = sameParams("get returned", got.Params)
	}
	if err == nil {
		if _, found, err = get(ctx, "999999999999"); err == nil && found {
			err = fmt.Errorf("get found a session for an id no launch returned")
		}
	}
	return verdict(Expanded, err)
}

func checkPause(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err != nil {
		return verdict(Expanded, err)
	}
	for _, st := range []ir.SessionStatus{ir.Paused, ir.Running} {
		applied, err := s.Runner.Update(ctx, sess.ID, ir.Patch{Status: st})
		if err != nil {
			return verdict(Expanded, fmt.Errorf("update to %s: %w", st, err))
		}
		if !applied {
			return Fail, fmt.Sprintf("update to %s returned false", st)
		}
		got, _, err := s.Runner.Get(ctx, sess.ID)
		if err != nil || got.Status != st {
			return Fail, fmt.Sprintf("after update to %s, get says %q (%v)", st, got.Status, err)
		}
	}
	return Supported, ""
}

func checkMax(ctx context.Context, s *Subject) (Outcome, string) {
	if s.MaxConcurrent == 0 {
		return NotProbed, s.NotProbed
	}
	for i := 0; i < s.MaxConcurrent; i++ {
		if _, err := launch(ctx, s, s.Actor); err != nil {
			return Fail, fmt.Sprintf("launch %d of %d, within the cap: %v", i+1, s.MaxConcurrent, err)
		}
	}
	extra, err := s.Runner.Launch(ctx, s.Actor, maps.Clone(Params))
	if err == nil {
		return Fail, fmt.Sprintf("launch %d started session %s beyond maxConcurrent %d", s.MaxConcurrent+1, extra.ID, s.MaxConcurrent)
	}
	m, lerr := listed(ctx, s)
	if lerr != nil {
		return Fail, lerr.Error()
	}
	if len(m) > s.MaxConcurrent {
		return Fail, fmt.Sprintf("%d sessions in flight, maxConcurrent %d", len(m), s.MaxConcurrent)
	}
	return Supported, ""
}

func checkTimeout(ctx context.Context, s *Subject) (Outcome, string) {
	if s.Timeout == "" {
		return NotProbed, s.NotProbed
	}
	sess, err := launch(ctx, s, s.Timeout)
	if err != nil {
		return Fail, err.Error()
	}
	var last ir.Session
	err = eventually(ctx, s.TimeoutWait, func() (bool, error) {
		var err error
		last, _, err = s.Runner.Get(ctx, sess.ID)
		return last.Status.Ended(), err
	})
	if err != nil {
		return Fail, fmt.Sprintf("the session was still %q past its timeout: %v", last.Status, err)
	}
	if last.Status != ir.Failed {
		return Fail, fmt.Sprintf("the session ended %q at its timeout, not failed", last.Status)
	}
	return Supported, ""
}

func checkIsolation(ctx context.Context, s *Subject) (Outcome, string) {
	if s.Isolated == "" {
		return NotProbed, s.NotProbed
	}
	sess, err := launch(ctx, s, s.Isolated)
	if err != nil {
		return Fail, err.Error()
	}
	var ran, root string
	var gone bool
	err = eventually(ctx, time.Minute, func() (bool, error) {
		var err error
		ran, root, gone, err = s.Workspace(ctx, sess.ID)
		return ran != "" && gone, err
	})
	switch {
	case err != nil && ran == "":
		return Fail, fmt.Sprintf("the isolated session never reported its workspace: %v", err)
	case ran == root:
		return Fail, "the isolated session ran in the shared root"
	case err != nil:
		return Fail, fmt.Sprintf("the isolated session's workspace %s was not removed when it ended: %v", ran, err)
	}
	return Supported, ""
}

func checkEnv(ctx context.Context, s *Subject) (Outcome, string) {
	if s.Seen == nil {
		return NotProbed, s.NotProbed
	}
	sess, err := launch(ctx, s, s.Actor)
	if err != nil {
		return Fail, err.Error()
	}
	var seen map[string]string
	err = eventually(ctx, 30*time.Second, func() (bool, error) {
		var err error
		seen, err = s.Seen(ctx, sess.ID)
		return seen != nil, err
	})
	if err != nil {
		return Fail, fmt.Sprintf("the probe never reported its environment: %v", err)
	}
	if err := sameParams("the process saw", seen); err != nil {
		return Fail, err.Error()
	}
	return Supported, ""
}

func checkNeverDone(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err != nil {
		return Fail, err.Error()
	}
	time.Sleep(300 * time.Millisecond) // give a runner that would end it the chance to
	got, _, err := s.Runner.Get(ctx, sess.ID)
	if err != nil {
		return Fail, err.Error()
	}
	if got.Status != ir.Running {
		return Fail, fmt.Sprintf("a person's session became %q by itself", got.Status)
	}
	m, err := listed(ctx, s)
	if err != nil {
		return Fail, err.Error()
	}
	if _, in := m[sess.ID]; !in {
		return Fail, "the open ask is not listed as in flight"
	}
	return Supported, ""
}

func checkVerifiedAct(ctx context.Context, s *Subject) (Outcome, string) {
	sess, err := launch(ctx, s, s.Actor)
	if err != nil {
		return Fail, err.Error()
	}
	if sess.Token == "" {
		return Unsupported, "launch returned no redeem token"
	}
	refused := []struct {
		what  string
		patch ir.Patch
	}{
		{"no token", ir.Patch{Status: ir.Done, Evidence: "approved in #42"}},
		{"a wrong token", ir.Patch{Status: ir.Done, Token: wrong(sess.Token), Evidence: "approved in #42"}},
		{"no evidence", ir.Patch{Status: ir.Done, Token: sess.Token}},
	}
	for _, r := range refused {
		// A refusal may come as false or as an error; either way nothing may change.
		if applied, _ := s.Runner.Update(ctx, sess.ID, r.patch); applied {
			return Fail, fmt.Sprintf("done was applied with %s", r.what)
		}
		got, _, _ := s.Runner.Get(ctx, sess.ID)
		if got.Status != ir.Running {
			return Fail, fmt.Sprintf("refusing done with %s left the session %q", r.what, got.Status)
		}
	}
	applied, err := s.Runner.Update(ctx, sess.ID, ir.Patch{Status: ir.Done, Token: sess.Token, Evidence: "approved in #42"})
	if err != nil || !applied {
		return Fail, fmt.Sprintf("the token with evidence did not complete the ask: %v", err)
	}
	got, _, err := s.Runner.Get(ctx, sess.ID)
	if err != nil || got.Status != ir.Done {
		return Fail, fmt.Sprintf("after the verified act, get says %q (%v)", got.Status, err)
	}
	if applied, _ := s.Runner.Update(ctx, sess.ID, ir.Patch{Status: ir.Done, Token: sess.Token, Evidence: "again"}); applied {
		return Fail, "the token redeemed twice"
	}
	return Supported, ""
}

// wrong returns a token of the same shape that is not t.
func wrong(t string) string {
	b := []byte(t)
	last := len(b) - 1
	if b[last] == 'a' {
		b[last] = 'b'
	} else {
		b[last] = 'a'
	}
	return string(b)
}

// CoreFailed reports whether any core check failed.
func CoreFailed(rs []Result) bool {
	return slices.ContainsFunc(rs, func(r Result) bool { return r.Tier == Core && r.Outcome == Fail })
}
