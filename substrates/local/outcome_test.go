//go:build unix

package local

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// jamEnds makes the store refuse, from inside its own write transaction, to record any session's
// end, as SQLite refuses a write on a full disk: a trigger another connection adds to the
// database raises the error SQLite gives then. The returned function takes the trigger away.
func jamEnds(t *testing.T, dir string) (unjam func()) {
	t.Helper()
	db, err := sql.Open("sqlite", DBPath(dir)+"?_pragma=busy_timeout(10000)") // it waits for the runner's writes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TRIGGER test_jam BEFORE UPDATE ON sessions
		WHEN NEW.status IN ('done', 'failed', 'cancelled') AND OLD.status IN ('running', 'paused')
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	unjam = func() {
		if _, err := db.Exec(`DROP TRIGGER IF EXISTS test_jam`); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(unjam) // before the runner's Close, which waits for the supervisor retrying
	return unjam
}

// A supervisor that cannot record its session's end (the store is not writable: a full disk)
// keeps the outcome beside the session's result; once its supervisor is gone, reconciliation
// records that outcome (done, verified, its exit status), saying it was recorded late and why,
// not "exit status unknown".
func TestEndKeptWhenTheStoreIsUnwritable(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	r.supervisor.outcomes.retryFor = 0
	unjam := jamEnds(t, dir)
	ctx := context.Background()
	s := launch(t, r, LaunchRequest{Actor: "judged", Text: "good"})
	r.Wait()
	if got, _, _ := r.Store.Get(ctx, s.ID); got.Status != ir.Running {
		t.Fatalf("the end was written: %s %q", got.Status, got.Reason)
	}
	if _, ok := r.supervisor.outcomes.kept(s.ID); !ok {
		t.Fatal("no outcome kept")
	}
	// Its supervisor is gone (in this test, the supervisor was this process).
	dead := deadProcess(t)
	if _, _, err := r.Store.Modify(ctx, s.ID, nil, func(m *store.Session) { m.SupervisorPID, m.SupervisorStart = dead.pid, dead.start }); err != nil {
		t.Fatal(err)
	}
	// While the store still cannot be written, get and list show the session as the store has
	// it, and say it ended and why that is not recorded.
	other := newRunner(t, dir, Options{})
	got, _, err := other.Get(ctx, s.ID)
	var unrec *UnrecordedError
	if !errors.As(err, &unrec) || got.Status != ir.Running || !strings.Contains(err.Error(), s.ID+" ended done") || !strings.Contains(err.Error(), "database or disk is full") {
		t.Fatalf("get while the store is unwritable: %s, %v", got.Status, err)
	}
	if ss, err := other.List(ctx, false); !errors.As(err, &unrec) || len(ss) != 1 {
		t.Fatalf("list while the store is unwritable: %d sessions, %v", len(ss), err)
	}
	unjam()
	got, _, err = other.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ir.Done || got.ExitCode == nil || *got.ExitCode != 0 || got.Verified == "" {
		t.Fatalf("recorded %s (%s), exit %v: %q", got.Status, got.Verified, got.ExitCode, got.Reason)
	}
	if !strings.Contains(got.Reason, "recorded late, by reconciliation: its supervisor could not write the store when it ended (") ||
		!strings.Contains(got.Reason, "database or disk is full") {
		t.Errorf("reason %q", got.Reason)
	}
	if _, err := os.Stat(r.supervisor.outcomes.path(s.ID)); !os.IsNotExist(err) {
		t.Errorf("the kept outcome outlived its recording: %v", err)
	}
}

// The outcome is kept at the first failed write, not after the retries (a supervisor killed
// while it retries must not lose it); a later write that succeeds records the end and removes
// the kept outcome. Meanwhile get says the session ended and that the store could not take it.
func TestEndKeptAtOnceAndRetriedUntilTheStoreIsWritable(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	r.supervisor.outcomes.retryFor, r.supervisor.outcomes.backoff = time.Hour, time.Millisecond
	unjam := jamEnds(t, dir)
	ctx := context.Background()
	s := launch(t, r, LaunchRequest{Actor: "fail"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := r.supervisor.outcomes.kept(s.ID); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the outcome was not kept while the supervisor retries")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, _, err := newRunner(t, dir, Options{}).Get(ctx, s.ID)
	var unrec *UnrecordedError
	if !errors.As(err, &unrec) || got.Status != ir.Running || !strings.Contains(err.Error(), s.ID+" ended failed (exit status 3)") {
		t.Fatalf("get while its supervisor retries: %s, %v", got.Status, err)
	}
	unjam()
	r.Wait()
	got, _, _ = r.Store.Get(ctx, s.ID)
	if got.Status != ir.Failed || got.ExitCode == nil || *got.ExitCode != 3 || strings.Contains(got.Reason, "late") {
		t.Fatalf("%s exit %v (%q)", got.Status, got.ExitCode, got.Reason)
	}
	if _, err := os.Stat(r.supervisor.outcomes.path(s.ID)); !os.IsNotExist(err) {
		t.Errorf("an outcome file is left: %v", err)
	}
}

// TestKeepOutcomeFits: an outcome whose texts are far longer than the reserved bytes (a huge
// store error, a long reason and evidence, in several scripts) is cut to fit and kept, readable;
// texts that cannot be cut enough are an error, never a loop. (A reason of 5 bytes used to be
// "cut" to 5 bytes again, forever.)
func TestKeepOutcomeFits(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	if err := os.MkdirAll(filepath.Dir(r.supervisor.outcomes.path("1-a")), 0o700); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("disque plein — ディスク ", 2000)
	o := outcome{Session: "1-a", Status: ir.Done, Reason: long, Verified: long, StoreError: long, EndedAt: time.Now().UTC()}
	if err := r.supervisor.outcomes.keep(o); err != nil {
		t.Fatal(err)
	}
	got, ok := r.supervisor.outcomes.kept("1-a")
	if !ok || got.Status != ir.Done || !strings.HasPrefix(got.StoreError, "disque plein") || !utf8.ValidString(got.Reason+got.Verified+got.StoreError) {
		t.Fatalf("kept %v: %+v", ok, got)
	}
	o = outcome{Session: strings.Repeat("x", 2*outcomeSize), Status: ir.Done, Reason: "short"}
	if err := r.supervisor.outcomes.keep(o); err == nil {
		t.Fatal("an outcome that cannot fit was kept")
	}
}
