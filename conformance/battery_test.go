package conformance

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// TestRegisteredRunnersConform runs the battery against every registered substrate's runners
// that run on this machine (the local exec and human runners; not GitHub's, which need --repo):
// every check that applies passes or is supported.
func TestRegisteredRunnersConform(t *testing.T) {
	all, err := Targets(registry.All(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	var here []Target
	for _, tg := range all {
		if tg.Skip == "" {
			here = append(here, tg)
		}
	}
	rs := Run(context.Background(), here)
	if len(here) == 0 || len(rs) == 0 {
		t.Fatal("no runner probed")
	}
	for _, r := range rs {
		t.Logf("%-12s %-22s %-9s %s %s", r.Target, r.Check, r.Tier, r.Outcome, r.Reason)
		if r.Outcome != Pass && r.Outcome != Supported {
			t.Errorf("%s %s: %s %s", r.Target, r.Check, r.Outcome, r.Reason)
		}
	}
}

// memRunner is an in-memory runner with switchable defects, to show the battery catches them.
type memRunner struct {
	mu       sync.Mutex
	next     int
	sessions map[string]*ir.Session
	// defects
	reuseIDs, mangle, keepCancelled, selfDone, ignoreToken bool
	// pausable: update pauses and resumes (otherwise unsupported).
	pausable bool
}

func (m *memRunner) Launch(ctx context.Context, agent string, p ir.LaunchParams) (ir.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.reuseIDs {
		m.next++
	}
	s := &ir.Session{ID: fmt.Sprint(m.next), Agent: agent, Status: ir.Running, Params: maps.Clone(p), Token: "tok"}
	if m.mangle {
		s.Params["PROBE_TEXT"] = strings.ReplaceAll(s.Params["PROBE_TEXT"], "\n", " ")
	}
	if m.selfDone {
		s.Status = ir.Done
	}
	m.sessions[s.ID] = s
	return *s, nil
}

func (m *memRunner) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return ir.Session{}, false, nil
	}
	return *s, true, nil
}

func (m *memRunner) List(ctx context.Context) ([]ir.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ir.Session
	for _, s := range m.sessions {
		if !s.Status.Ended() || (m.keepCancelled && s.Status == ir.Cancelled) {
			out = append(out, *s)
		}
	}
	return out, nil
}

func (m *memRunner) Update(ctx context.Context, id string, p ir.Patch) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || s.Status.Ended() {
		return false, nil
	}
	if p.Status == ir.Done && !m.ignoreToken && (p.Token != s.Token || p.Evidence == "") {
		return false, nil
	}
	if (p.Status == ir.Paused || p.Status == ir.Running) && !m.pausable {
		return false, fmt.Errorf("pausing: %w", ir.ErrUnsupported)
	}
	s.Status = p.Status
	return true, nil
}

func (m *memRunner) Cancel(ctx context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || s.Status.Ended() {
		return false, nil
	}
	s.Status = ir.Cancelled
	return true, nil
}

func memTarget(name string, human bool, set func(*memRunner)) Target {
	return Target{Name: name, Substrate: "mem", New: func(ctx context.Context) (*Subject, error) {
		m := &memRunner{sessions: map[string]*ir.Session{}}
		set(m)
		return &Subject{Runner: m, Actor: "probe", Human: human, NotProbed: "in memory: no process", Close: func() {}}, nil
	}}
}

// TestBatterySetsUpOnlyWhatApplies: a check that does not apply to the kind of actor a target
// launches sets up no subject for it (each setup is an installation: the local runner's cost
// nearly the whole battery's time).
func TestBatterySetsUpOnlyWhatApplies(t *testing.T) {
	for _, human := range []bool{false, true} {
		kind, setups := "agent", 0
		if human {
			kind = "human"
		}
		target := memTarget(kind, human, func(m *memRunner) {})
		newSubject := target.New
		target.New = func(ctx context.Context) (*Subject, error) { setups++; return newSubject(ctx) }
		rs := Run(context.Background(), []Target{target})
		want := 0
		for _, c := range Checks {
			if c.For == "" || c.For == kind {
				want++
			}
		}
		if len(rs) != want || setups != want {
			t.Errorf("%s: %d results from %d setups; want %d of each (one per check that applies)", kind, len(rs), setups, want)
		}
	}
}

// TestBatteryCatchesDefects: each defect fails the check that probes it, and a correct runner
// passes every core check.
func TestBatteryCatchesDefects(t *testing.T) {
	targets := []Target{
		memTarget("sound", false, func(m *memRunner) {}),
		memTarget("reuses-ids", false, func(m *memRunner) { m.reuseIDs = true }),
		memTarget("mangles", false, func(m *memRunner) { m.mangle = true }),
		memTarget("lists-cancelled", false, func(m *memRunner) { m.keepCancelled = true }),
		memTarget("self-done", true, func(m *memRunner) { m.selfDone = true }),
		memTarget("no-verification", true, func(m *memRunner) { m.ignoreToken = true }),
	}
	got := map[string]Outcome{}
	for _, r := range Run(context.Background(), targets) {
		got[r.Target+" "+r.Check] = r.Outcome
	}
	want := map[string]Outcome{
		"sound launch":                         Pass,
		"sound cancel-leaves-list":             Pass,
		"sound pause-resume":                   Unsupported,
		"sound timeout":                        NotProbed,
		"reuses-ids distinct-ids":              Fail,
		"mangles params-verbatim":              Fail,
		"lists-cancelled cancel-leaves-list":   Fail,
		"self-done launch":                     Fail,
		"self-done never-done-by-itself":       Fail,
		"no-verification done-by-verified-act": Fail,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if _, ok := got["sound never-done-by-itself"]; ok {
		t.Errorf("a human check ran against an agent runner")
	}
	if !CoreFailed(Run(context.Background(), targets[1:2])) || CoreFailed(Run(context.Background(), targets[:1])) {
		t.Errorf("CoreFailed does not follow the core checks")
	}
}
