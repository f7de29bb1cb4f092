package local

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

var cronFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  hourly:
    behavior: scripts/quick.sh
    triggers: [{ cron: "0 * * * *", params: { WHY: trigger.kind } }]
  weekday9:
    behavior: scripts/quick.sh
    triggers: [{ cron: "0 9 * * 1-5" }]
  paris9:
    behavior: scripts/quick.sh
    triggers: [{ cron: "30 9 * * *" }]
  slow:
    behavior: scripts/slow.sh
    triggers: [{ cron: "*/15 * * * *" }]
policy:
  box:
    local: { timezone: Europe/Paris }
`,
	files: map[string]string{
		"scripts/quick.sh": "#!/bin/sh\n" + scriptDone,
		"scripts/slow.sh":  "#!/bin/sh\nsleep 300\n" + scriptDone,
	},
}

func fired(rep TickReport) string {
	var names []string
	for _, s := range rep.Fired {
		names = append(names, s.Actor)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func TestTickFiresExactlyWhatCameDue(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, cronFleet, false)
	c := &clock{}
	r := newRunner(t, dir, Options{Now: c.Now})
	ctx := context.Background()
	t.Cleanup(func() { cancelRunning(t, r) })
	steps := []struct {
		now  string // UTC
		want string
	}{
		{"2026-03-02T06:59:00Z", ""},                       // Monday; the first tick only starts the schedule
		{"2026-03-02T07:00:00Z", "hourly,slow"},            // 07:00 UTC = 08:00 Paris
		{"2026-03-02T07:00:30Z", ""},                       // same minute again: nothing twice
		{"2026-03-02T07:14:59Z", ""},                       //
		{"2026-03-02T07:15:00Z", ""},                       // slow is due but still running: deferred
		{"2026-03-02T08:00:00Z", "hourly,weekday9"},        // 09:00 Paris; slow still running
		{"2026-03-02T08:31:00Z", "paris9"},                 // 09:30 Paris, a minute late
		{"2026-03-02T14:00:00Z", "hourly"},                 // downtime: six missed hours fire once
		{"2026-03-07T08:00:00Z", "hourly,paris9,weekday9"}, // days of downtime: each fires once
	}
	for i, st := range steps {
		settle(t, r, "slow") // quick sessions end before the next tick; slow keeps running
		c.Set(st.now)
		rep, err := r.Tick(ctx)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if i == 0 && !rep.First {
			t.Errorf("the first tick is not reported as first")
		}
		if got := fired(rep); got != st.want {
			t.Errorf("step %d at %s: fired %q, want %q (deferred %v)", i, st.now, got, st.want, rep.Deferred)
		}
		if i == 4 && (len(rep.Deferred) != 1 || rep.Deferred[0].Actor != "slow") {
			t.Errorf("step 4: deferred %v, want slow", rep.Deferred)
		}
		for _, s := range rep.Fired {
			if s.Trigger != "cron" || s.Origin != "schedule" {
				t.Errorf("fired session %+v", s)
			}
			if s.Actor == "hourly" && s.Params["WHY"] != "cron" {
				t.Errorf("trigger.kind of a cron firing: %q", s.Params["WHY"])
			}
		}
	}
	// The deferral was recorded once, not once per tick.
	evs, _ := r.Store.Events(ctx, "", 0)
	n := 0
	for _, e := range evs {
		if e.Kind == "deferred" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d deferral events, want 1", n)
	}
	// slow ends: the deferred firing goes at the next tick.
	ss, _ := r.Store.List(ctx, store.ListOptions{Actor: "slow"})
	for _, s := range ss {
		r.Cancel(ctx, s.ID)
	}
	settle(t, r)
	c.Set("2026-03-07T08:00:40Z")
	rep, err := r.Tick(ctx)
	if err != nil || fired(rep) != "slow" {
		t.Fatalf("after slow ended: fired %q, %v", fired(rep), err)
	}
	for _, s := range rep.Fired {
		r.Cancel(ctx, s.ID)
	}
}

// settle waits until no session is in flight except those of the actors named.
func settle(t testing.TB, r *Runner, except ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ss, err := r.Store.List(context.Background(), store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		busy := ""
		for _, s := range ss {
			if !s.Status.Ended() && !slices.Contains(except, s.Actor) {
				busy = s.ID
			}
		}
		if busy == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s did not end", busy)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cancelRunning cancels every session still in flight, so a failed test does not wait on them.
func cancelRunning(t testing.TB, r *Runner) {
	ss, _ := r.Store.List(context.Background(), store.ListOptions{})
	for _, s := range ss {
		if !s.Status.Ended() {
			r.Cancel(context.Background(), s.ID)
		}
	}
}

var capFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  a:
    behavior: scripts/nap.sh
    triggers: [{ cron: "* * * * *" }, { dispatch: true }]
  b:
    behavior: scripts/nap.sh
    triggers: [{ cron: "* * * * *" }, { dispatch: true }]
  c:
    behavior: scripts/nap.sh
    triggers: [{ cron: "* * * * *" }, { dispatch: true }]
policy:
  maxConcurrent: 2
  box:
    local: { overlap: true }
`,
	files: map[string]string{"scripts/nap.sh": "#!/bin/sh\nsleep 0.2\n" + scriptDone},
}

// TestMaxConcurrentUnderConcurrency launches and ticks from many runners at once (each with
// its own connection, as separate processes have) and checks from the record that running
// agent sessions never exceeded maxConcurrent: a session holds capacity from its insert to
// its end, so no instant may have more than 2 of them open.
func TestMaxConcurrentUnderConcurrency(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, capFleet, false)
	ctx := context.Background()
	var wg sync.WaitGroup
	var refusals, launched int64
	var mu sync.Mutex
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := newRunner(t, dir, Options{})
			defer r.Wait()
			for i := 0; i < 15; i++ {
				if w%3 == 0 {
					if _, err := r.Tick(ctx); err != nil {
						t.Error(err)
					}
				} else {
					_, err := r.Launch(ctx, LaunchRequest{Actor: string(rune('a' + i%3))})
					var refused *RefusedError
					mu.Lock()
					if errors.As(err, &refused) {
						refusals++
					} else if err != nil {
						t.Error(err)
					} else {
						launched++
					}
					mu.Unlock()
				}
				time.Sleep(time.Duration(10+w) * time.Millisecond)
			}
		}(w)
	}
	wg.Wait()
	r := newRunner(t, dir, Options{})
	all, err := r.Store.List(ctx, store.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range all {
		if !s.Status.Ended() {
			t.Fatalf("session %s still %s", s.ID, s.Status)
		}
		edges = append(edges, edge{s.CreatedAt, +1}, edge{s.EndedAt, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta // an end before a start at the same instant
	})
	open, peak := 0, 0
	for _, e := range edges {
		open += e.delta
		if open > peak {
			peak = open
		}
	}
	if peak > 2 {
		t.Fatalf("%d agent sessions were running at once; maxConcurrent is 2", peak)
	}
	if refusals == 0 || launched == 0 {
		t.Fatalf("the test did not exercise capacity: %d launched, %d refused", launched, refusals)
	}
	t.Logf("%d sessions, %d launches refused at capacity, peak %d", len(all), refusals, peak)
}

func TestFirstTickOnFreshInstallIsReported(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, cronFleet, false)
	c := &clock{}
	c.Set("2026-03-02T07:00:00Z")
	r := newRunner(t, dir, Options{Now: c.Now})
	var b strings.Builder
	rep, _ := r.Tick(context.Background())
	PrintTick(&b, rep)
	if !strings.Contains(b.String(), "first tick") {
		t.Errorf("%q", b.String())
	}
	if next := r.NextWake(context.Background(), c.Now()); !next.Equal(time.Date(2026, 3, 2, 7, 15, 0, 0, time.UTC)) {
		t.Errorf("next wake %s, want 07:15 UTC", next.UTC())
	}
}
