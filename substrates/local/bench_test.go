package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/runtimes"
)

// BenchmarkLaunch measures sustained launches of a trivial command in one process: each
// iteration records a session, starts `exit 0` in its own process group and, once it exits,
// verifies and records the end. Target: at least 200 launches per second.
func BenchmarkLaunch(b *testing.B) {
	dir := installFleet(b, fleet{yml: trivialYAML, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	r := newRunner(b, dir, Options{})
	ctx := context.Background()
	b.ResetTimer()
	start, writes, stats, cpu := time.Now(), r.Store.Writes(), r.Store.Stats(), usedCPU()
	for i := 0; i < b.N; i++ {
		if _, err := r.Launch(ctx, LaunchRequest{Actor: "worker", Ref: "1"}); err != nil {
			b.Fatal(err)
		}
	}
	r.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "launches/s")
	b.ReportMetric(float64(r.Store.Writes()-writes)/float64(b.N), "writes/launch")
	b.ReportMetric(float64(r.Store.Stats().Txs-stats.Txs)/float64(b.N), "txs/launch")
	b.ReportMetric(float64(r.Store.Stats().Prepared-stats.Prepared)/float64(b.N), "compiles/launch")
	b.ReportMetric(float64(r.Store.Stats().Runs-stats.Runs)/float64(b.N), "statements/launch")
	b.ReportMetric(float64(usedCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLaunchOpen is BenchmarkLaunch with the runner opened and closed for each launch, as
// the CLI's process does: opening the store (its schema parsed), the caller's identification, the
// launch, its supervision and the close. (A detached launch opens the store once more, in the
// supervisor's process.)
func BenchmarkLaunchOpen(b *testing.B) {
	dir := installFleet(b, fleet{yml: trivialYAML, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	ctx := context.Background()
	b.ResetTimer()
	cpu := usedCPU()
	var stats store.Stats
	for i := 0; i < b.N; i++ {
		r, err := New(dir, Options{Confine: true, Playbooks: runtimes.Host{}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Launch(ctx, LaunchRequest{Actor: "worker", Ref: "1"}); err != nil {
			b.Fatal(err)
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
		st := r.Store.Stats()
		stats.Conns, stats.Prepared, stats.Txs, stats.Runs = stats.Conns+st.Conns, stats.Prepared+st.Prepared, stats.Txs+st.Txs, stats.Runs+st.Runs
	}
	b.ReportMetric(float64(usedCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(stats.Conns)/float64(b.N), "conns/op")
	b.ReportMetric(float64(stats.Txs)/float64(b.N), "txs/op")
	b.ReportMetric(float64(stats.Prepared)/float64(b.N), "compiles/op")
	b.ReportMetric(float64(stats.Runs)/float64(b.N), "statements/op")
}

const trivialYAML = `schema: autonomy.ir.v1
targets: [local]
actors:
  worker:
    behavior: scripts/true.sh
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`

// BenchmarkList100k measures runner list (in flight, reconciled) over 100,000 stored sessions of
// which 10 are running. Target: under 20 ms.
func BenchmarkList100k(b *testing.B) {
	dir := installFleet(b, fleet{yml: trivialYAML, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	r := newRunner(b, dir, Options{})
	ctx := context.Background()
	self := os.Getpid()
	selfStart, err := proc.StartTime(self)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	const total, running = 100_000, 10
	for batch := 0; batch < total/1000; batch++ {
		err := r.Store.Tx(ctx, func(tx *store.Tx) error {
			for i := 0; i < 1000; i++ {
				s := store.Session{Actor: "worker", Kind: "agent", Status: ir.Done, Origin: "operator", Trigger: "dispatch",
					Params: ir.LaunchParams{"ITEM": fmt.Sprint(i)}, CreatedAt: now, StartedAt: now, EndedAt: now}
				if batch*1000+i >= total-running {
					// In flight, supervised by a live process (this one), so reconciliation keeps it.
					s.Status, s.EndedAt = ir.Running, time.Time{}
					s.PID, s.PIDStart, s.SupervisorPID, s.SupervisorStart = self, selfStart, self, selfStart
				}
				if err := tx.Insert(&s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ss, err := r.List(ctx, false)
		if err != nil {
			b.Fatal(err)
		}
		if len(ss) != running {
			b.Fatalf("listed %d, want %d", len(ss), running)
		}
	}
}

// BenchmarkTick1000 measures one tick over 1,000 cron actors: the common tick where none is
// due, and one where every actor is due and maxConcurrent 10 lets 10 start and defers 990.
// Target: under 50 ms.
func BenchmarkTick1000(b *testing.B) {
	var y strings.Builder
	y.WriteString("schema: autonomy.ir.v1\ntargets: [local]\nactors:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&y, "  a%d:\n    behavior: scripts/true.sh\n    triggers: [{ cron: \"%d %d * * *\", params: { WHY: trigger.kind } }]\n", i, i%60, (i/60)%24)
	}
	y.WriteString("policy:\n  maxConcurrent: 10\n")
	dir := installFleet(b, fleet{yml: y.String(), files: map[string]string{"scripts/true.sh": "#!/bin/sh\nsleep 30\n" + scriptDone}}, false)
	ctx := context.Background()

	b.Run("none-due", func(b *testing.B) {
		c := &clock{}
		c.Set("2026-03-02T00:00:30Z")
		r := newRunner(b, dir, Options{Now: c.Now})
		if _, err := r.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c.Set("2026-03-02T00:00:40Z")
			rep, err := r.Tick(ctx)
			if err != nil || len(rep.Fired) != 0 {
				b.Fatalf("%v %d", err, len(rep.Fired))
			}
		}
	})
	b.Run("none-due-reopened", func(b *testing.B) {
		// What runner serve does at each tick: it opens the installation again (a compile takes
		// effect without a restart), then ticks.
		c := &clock{}
		c.Set("2026-03-02T00:00:30Z")
		r := newRunner(b, dir, Options{Now: c.Now})
		if _, err := r.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c.Set("2026-03-02T00:00:40Z")
			in, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			in.keepActors(r.In)
			r.In = in
			rep, err := r.Tick(ctx)
			if err != nil || len(rep.Fired) != 0 {
				b.Fatalf("%v %d", err, len(rep.Fired))
			}
		}
	})
	// In this process, as the tests run it, and detached, as the CLI runs it: each session's
	// supervisor is an autonomy process of its own (runner supervise).
	b.Run("all-due-at-capacity", func(b *testing.B) { tickAtCapacity(b, y.String(), Options{}) })
	b.Run("all-due-at-capacity-detached", func(b *testing.B) {
		tickAtCapacity(b, y.String(), Options{Detach: true, Exe: testbin.Path(b)})
	})
}

// tickAtCapacity times a tick that finds 1,000 actors due at a capacity of 10: ten fire, and
// 990 are deferred. Its CPU is the tick's and that of the supervisions it started meanwhile,
// when they run in this process.
func tickAtCapacity(b *testing.B, yml string, opts Options) {
	ctx := context.Background()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d := installFleet(b, fleet{yml: yml, files: map[string]string{"scripts/true.sh": "#!/bin/sh\nsleep 30\n" + scriptDone}}, false)
		c := &clock{}
		c.Set("2026-03-01T00:00:00Z")
		o := opts
		o.Now = c.Now
		r := newRunner(b, d, o)
		if _, err := r.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		c.Set("2026-03-02T00:00:00Z")
		cpu0 := usedCPU()
		b.StartTimer()
		rep, err := r.Tick(ctx)
		b.StopTimer()
		cpu += usedCPU() - cpu0
		if err != nil || len(rep.Fired) != 10 || len(rep.Deferred) != 990 {
			b.Fatalf("%v: fired %d, deferred %d", err, len(rep.Fired), len(rep.Deferred))
		}
		for _, s := range rep.Fired {
			r.Cancel(ctx, s.ID)
		}
		r.Wait()
		// Detached supervisors write the session's end after the cancel: wait for them to exit.
		for _, f := range rep.Fired {
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				s, _, err := r.Store.Get(ctx, f.ID)
				if err != nil {
					b.Fatal(err)
				}
				if s.Status.Ended() && (s.SupervisorPID <= 0 || s.SupervisorPID == os.Getpid() || !proc.Alive(s.SupervisorPID, s.SupervisorStart)) {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("session %s (%s, supervisor %d) still runs 30 s after its cancel", s.ID, s.Status, s.SupervisorPID)
				}
			}
		}
		b.StartTimer()
	}
	if !opts.Detach {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}
