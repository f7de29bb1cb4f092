package conformance

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// memFleet gives a memRunner the seams of the behavioral checks, realized in memory as a
// correct runner would (what each launched "process" saw, a cron schedule of ticker at 06:17
// UTC, launcher's agent:launch@probe), with switchable defects.
type memFleet struct {
	*memRunner
	seen map[string]map[string]string
	last time.Time
	// defects
	cronEarly, cronEveryTick, kindNotCron, dropText, operatorNone, sessionOwner, forgeable,
	scopeIgnored, anyoneLaunches, refusedButStarted, verbsUnchecked, resultUnchecked bool
	mergesRejected, selfApproves, humanPathMerges, prelaunchIgnored, capsDropped bool
	// proposals are the decided proposals, by proposer session.
	proposals map[string]substrates.ProposalView
}

// propose decides the proposal of a proposer's session p at once, as a correct code flow would
// once its reviewer ended (unless defective).
func (m *memFleet) propose(s *ir.Session, p ir.LaunchParams) {
	s.Status = ir.Done
	v := substrates.ProposalView{State: "merged", By: "reviewer"}
	switch {
	case p["PROBE_REF"] == "human" && !m.humanPathMerges:
		v.State = "waiting"
	case p["PROBE_TEXT"] == "reject" && !m.mergesRejected:
		v.State = "refused"
	}
	if m.selfApproves {
		v.By = "proposer"
	}
	m.proposals[s.ID] = v
}

// memAs is the memFleet's runner as called from inside a session: only the controller may list,
// get, update and cancel.
type memAs struct {
	m      *memFleet
	caller string
}

func (a memAs) allowed(ctx context.Context) error {
	s, _, _ := a.m.Get(ctx, a.caller)
	if s.Agent != controllerActor && !a.m.verbsUnchecked {
		return fmt.Errorf("%s holds no agent capability", s.Agent)
	}
	return nil
}

func (a memAs) Launch(ctx context.Context, agent string, p ir.LaunchParams) (ir.Session, error) {
	return ir.Session{}, fmt.Errorf("not here")
}

func (a memAs) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	if err := a.allowed(ctx); err != nil {
		return ir.Session{}, false, err
	}
	return a.m.Get(ctx, id)
}

func (a memAs) List(ctx context.Context) ([]ir.Session, error) {
	if err := a.allowed(ctx); err != nil {
		return nil, err
	}
	return a.m.List(ctx)
}

func (a memAs) Update(ctx context.Context, id string, p ir.Patch) (bool, error) {
	if err := a.allowed(ctx); err != nil {
		return false, err
	}
	return a.m.Update(ctx, id, p)
}

func (a memAs) Cancel(ctx context.Context, id string) (bool, error) {
	if err := a.allowed(ctx); err != nil {
		return false, err
	}
	return a.m.Cancel(ctx, id)
}

// launch launches as the memRunner does; the result actor ends at once, done only with a valid
// result (PROBE_REF "valid").
func (m *memFleet) launch(ctx context.Context, agent string, p ir.LaunchParams) (ir.Session, error) {
	s, err := m.memRunner.Launch(ctx, agent, p)
	if err != nil || agent != "resulter" && agent != "proposer" && agent != "prelauncher" && agent != "carrier" {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if agent == "carrier" {
		m.seen[s.ID] = map[string]string{"AUTONOMY_CAPABILITIES": "tasks:author tasks:converse"}
		if m.capsDropped {
			m.seen[s.ID]["AUTONOMY_CAPABILITIES"] = "tasks:author"
		}
		return s, nil
	}
	if agent == "prelauncher" {
		switch {
		case p["PROBE_REF"] != "fail":
			m.seen[s.ID] = map[string]string{"PROBE_PRELAUNCH": s.ID}
		case m.prelaunchIgnored: // its process ran, then failed
			m.sessions[s.ID].Status = ir.Failed
			m.seen[s.ID] = map[string]string{}
		default:
			m.sessions[s.ID].Status = ir.Failed
			m.seen[s.ID] = nil
		}
		return *m.sessions[s.ID], nil
	}
	if agent == "proposer" {
		m.propose(m.sessions[s.ID], p)
		return *m.sessions[s.ID], nil
	}
	m.sessions[s.ID].Status = ir.Failed
	if p["PROBE_REF"] == "valid" || m.resultUnchecked {
		m.sessions[s.ID].Status = ir.Done
	}
	return *m.sessions[s.ID], nil
}

// memFleetRunner is the memFleet's operator runner.
type memFleetRunner struct{ *memFleet }

func (r memFleetRunner) Launch(ctx context.Context, agent string, p ir.LaunchParams) (ir.Session, error) {
	return r.launch(ctx, agent, p)
}

var memCaps = map[string]string{"launcher": "probe"} // the one actor each may launch

func (m *memFleet) fire(ctx context.Context, actor string, f substrates.Firing) (ir.Session, error) {
	env := map[string]string{"PROBE_REF": f.Ref, "PROBE_TEXT": f.Text, "PROBE_ACTOR": f.From, "PROBE_ROLE": "OWNER", "PROBE_KIND": "dispatch"}
	if f.Kind != "" {
		env["PROBE_KIND"] = f.Kind
	}
	if m.dropText {
		env["PROBE_TEXT"] = ""
	}
	if m.operatorNone {
		env["PROBE_ROLE"] = "NONE"
	}
	var refusal error
	if f.Session != "" {
		caller, ok := m.sessions[f.Session]
		if !ok {
			return ir.Session{}, fmt.Errorf("no session %s", f.Session)
		}
		scope, holds := memCaps[caller.Agent]
		switch {
		case !holds && !m.anyoneLaunches:
			refusal = fmt.Errorf("%s may not launch", caller.Agent)
		case holds && scope != actor && !m.scopeIgnored:
			refusal = fmt.Errorf("%s may launch only %s", caller.Agent, scope)
		case !m.forgeable && (f.From != "" && f.From != caller.Agent || f.Params["PROBE_ROLE"] != "" || f.Params["PROBE_ACTOR"] != ""):
			refusal = fmt.Errorf("a session may not set who fired it")
		}
		env["PROBE_ACTOR"], env["PROBE_ROLE"] = caller.Agent, "NONE"
		if m.sessionOwner {
			env["PROBE_ROLE"] = "OWNER"
		}
	}
	maps.Copy(env, f.Params)
	if refusal != nil && !m.refusedButStarted {
		return ir.Session{}, refusal
	}
	s, err := m.Launch(ctx, actor, ir.LaunchParams{"PROBE_REF": env["PROBE_REF"], "PROBE_TEXT": env["PROBE_TEXT"]})
	m.mu.Lock()
	m.seen[s.ID] = env
	m.mu.Unlock()
	if refusal != nil {
		return ir.Session{}, refusal
	}
	return s, err
}

func (m *memFleet) tickAt(ctx context.Context, now time.Time) ([]ir.Session, error) {
	minute := time.Date(now.Year(), now.Month(), now.Day(), 6, 17, 0, 0, time.UTC)
	if m.cronEarly {
		minute = minute.Add(-time.Second)
	}
	due := !m.last.IsZero() && (m.last.Before(minute) || m.cronEveryTick) && !now.Before(minute) && now.Before(minute.Add(time.Minute))
	m.last = now
	if !due {
		return nil, nil
	}
	s, err := m.Launch(ctx, "ticker", nil)
	kind := "cron"
	if m.kindNotCron {
		kind = "dispatch"
	}
	m.mu.Lock()
	m.seen[s.ID] = map[string]string{"PROBE_KIND": kind}
	m.mu.Unlock()
	return []ir.Session{s}, err
}

func memFleetTarget(name string, set func(*memFleet)) Target {
	return Target{Name: name, Substrate: "mem", New: func(ctx context.Context) (*Subject, error) {
		m := &memFleet{memRunner: &memRunner{sessions: map[string]*ir.Session{}, pausable: true}, seen: map[string]map[string]string{}, proposals: map[string]substrates.ProposalView{}}
		set(m)
		return &Subject{Runner: memFleetRunner{m}, Actor: "probe", Fire: m.fire, TickAt: m.tickAt, Result: "resulter",
			AsSession: func(ctx context.Context, id string) (ir.Runner, error) { return memAs{m, id}, nil },
			Proposer:  "proposer", Prelaunch: "prelauncher",
			Proposal: func(ctx context.Context, session string) (substrates.ProposalView, error) {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.proposals[session], nil
			},
			Seen: func(ctx context.Context, id string) (map[string]string, error) {
				m.mu.Lock()
				defer m.mu.Unlock()
				if env, ok := m.seen[id]; ok {
					return env, nil
				}
				if s, ok := m.sessions[id]; ok {
					return s.Params, nil // launched through the Runner contract: its params
				}
				return nil, nil
			}, NotProbed: "in memory", Close: func() {}}, nil
	}}
}

// TestBehaviorChecksCatchDefects: each behavioral check passes on a correct runner and fails on
// one broken where it looks; a runner without the seams leaves them not probed.
func TestBehaviorChecksCatchDefects(t *testing.T) {
	cases := []struct {
		defect string
		set    func(*memFleet)
		check  string
	}{
		{"fires before its minute", func(m *memFleet) { m.cronEarly = true }, "cron-fires"},
		{"fires twice in its minute", func(m *memFleet) { m.cronEveryTick = true }, "cron-fires"},
		{"no trigger.kind cron", func(m *memFleet) { m.kindNotCron = true }, "cron-fires"},
		{"drops subject.text", func(m *memFleet) { m.dropText = true }, "param-sources"},
		{"the operator's role is NONE", func(m *memFleet) { m.operatorNone = true }, "param-sources"},
		{"a session's launch is OWNER", func(m *memFleet) { m.sessionOwner = true }, "session-sources"},
		{"a session may set its role", func(m *memFleet) { m.forgeable = true }, "session-sources"},
		{"refuses but starts", func(m *memFleet) { m.refusedButStarted = true }, "scope-refused"},
		{"ignores a scope", func(m *memFleet) { m.scopeIgnored = true }, "scope-refused"},
		{"launches without agent:launch", func(m *memFleet) { m.anyoneLaunches = true }, "scope-refused"},
		{"any session lists, updates and cancels", func(m *memFleet) { m.verbsUnchecked = true }, "agent-verbs"},
		{"done without a valid result", func(m *memFleet) { m.resultUnchecked = true }, "result-validated"},
		{"starts the process when its prelaunch fails", func(m *memFleet) { m.prelaunchIgnored = true }, "prelaunch"},
		{"does not tell the process a capability", func(m *memFleet) { m.capsDropped = true }, "capabilities-carried"},
		{"merges a rejected change", func(m *memFleet) { m.mergesRejected = true }, "merge-boundary"},
		{"merges on the proposer's own verdict", func(m *memFleet) { m.selfApproves = true }, "merge-boundary"},
		{"merges a human-required path", func(m *memFleet) { m.humanPathMerges = true }, "merge-boundary"},
	}
	behavioral := []string{"cron-fires", "param-sources", "session-sources", "scope-refused", "agent-verbs", "result-validated", "capabilities-carried", "prelaunch", "merge-boundary"}
	sound := map[string]Result{}
	for _, r := range Run(context.Background(), []Target{memFleetTarget("sound", func(*memFleet) {})}) {
		sound[r.Check] = r
	}
	for _, c := range behavioral {
		if r := sound[c]; r.Outcome != Pass && r.Outcome != Supported || r.Observed == "" {
			t.Errorf("a sound runner's %s: %s %s (observed %q)", c, r.Outcome, r.Reason, r.Observed)
		}
	}
	for _, c := range cases {
		var got *Result
		for _, r := range Run(context.Background(), []Target{memFleetTarget(c.defect, c.set)}) {
			if r.Check == c.check {
				got = &r
			}
		}
		if got == nil || got.Outcome != Fail {
			t.Errorf("%s: %s is %+v, want a failure", c.defect, c.check, got)
		} else {
			t.Logf("%s: %s", c.defect, got.Reason)
		}
	}
	for _, r := range Run(context.Background(), []Target{memTarget("no seams", false, func(*memRunner) {})}) {
		for _, c := range behavioral {
			if r.Check == c && r.Outcome != NotProbed {
				t.Errorf("without the seams, %s is %s, want not probed", c, r.Outcome)
			}
		}
	}
}
