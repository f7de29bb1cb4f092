package fakesubstrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// ProbeTargets is fake's one runner, in memory (substrates.Prober).
func (Substrate) ProbeTargets(env substrates.ProbeEnv) ([]substrates.ProbeTarget, error) {
	return []substrates.ProbeTarget{{Name: "fake memory", Substrate: Name, New: func(ctx context.Context) (*substrates.ProbeSubject, error) {
		return &substrates.ProbeSubject{Runner: NewRunner(), Actor: "probe", NotProbed: "the fake runner runs no process", Close: func() {}}, nil
	}}}, nil
}

// Runner is an in-memory ir.Runner: sessions run until cancelled or updated.
type Runner struct {
	mu       sync.Mutex
	next     int
	sessions map[string]*ir.Session
}

// NewRunner is an empty Runner.
func NewRunner() *Runner { return &Runner{sessions: map[string]*ir.Session{}} }

// Launch starts a session of agent.
func (r *Runner) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	s := &ir.Session{ID: fmt.Sprintf("fake-%d", r.next), Agent: agent, Status: ir.Running, Params: maps.Clone(params)}
	r.sessions[s.ID] = s
	return *s, nil
}

// Get returns session id.
func (r *Runner) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok {
		return ir.Session{}, false, nil
	}
	return *s, true, nil
}

// List returns the sessions in flight, by id.
func (r *Runner) List(ctx context.Context) ([]ir.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ir.Session
	for _, s := range r.sessions {
		if !s.Status.Ended() {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b ir.Session) int { return compare(a.ID, b.ID) })
	return out, nil
}

// Update applies no transition: the fake runner cannot pause.
func (r *Runner) Update(ctx context.Context, id string, p ir.Patch) (bool, error) {
	return false, nil
}

// Cancel ends a session in flight.
func (r *Runner) Cancel(ctx context.Context, id string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok || s.Status.Ended() {
		return false, nil
	}
	s.Status = ir.Cancelled
	return true, nil
}
