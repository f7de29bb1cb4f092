//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/store"
)

// A supervisor that cannot record its session's end (the store is not writable: a full disk)
// keeps the outcome beside the session's result; once its supervisor is gone, reconciliation
// records that outcome (done, verified, its exit status), saying it was recorded late and why,
// not "exit status unknown".
func TestEndKeptWhenTheStoreIsUnwritable(t *testing.T) {
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	r.endRetryFor = 0
	r.endFault = func() error { return errors.New("database or disk is full") }
	ctx := context.Background()
	s := launch(t, r, LaunchRequest{Actor: "judged", Text: "good"})
	r.Wait()
	if got, _, _ := r.Store.Get(ctx, s.ID); got.Status != ir.Running {
		t.Fatalf("the end was written: %s %q", got.Status, got.Reason)
	}
	if _, err := os.Stat(r.outcomePath(s.ID)); err != nil {
		t.Fatalf("no outcome kept: %v", err)
	}
	// Its supervisor is gone (in this test, the supervisor was this process).
	dead := deadProcess(t)
	if _, _, err := r.Store.Modify(ctx, s.ID, nil, func(m *store.Session) { m.SupervisorPID, m.SupervisorStart = dead.pid, dead.start }); err != nil {
		t.Fatal(err)
	}
	got, _, err := newRunner(t, dir, Options{}).Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ir.Done || got.ExitCode == nil || *got.ExitCode != 0 || got.Verified == "" {
		t.Fatalf("recorded %s (%s), exit %v: %q", got.Status, got.Verified, got.ExitCode, got.Reason)
	}
	if !strings.Contains(got.Reason, "recorded late, by reconciliation: its supervisor could not write the store when it ended (database or disk is full)") {
		t.Errorf("reason %q", got.Reason)
	}
	if _, err := os.Stat(r.outcomePath(s.ID)); !os.IsNotExist(err) {
		t.Errorf("the kept outcome outlived its recording: %v", err)
	}
}

// A store that can be written again within endRetryFor takes the end from the supervisor
// itself, and no outcome file is left.
func TestEndRetriedUntilTheStoreIsWritable(t *testing.T) {
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	var tries atomic.Int32
	r.endRetryFor, r.endBackoff = time.Hour, time.Nanosecond
	r.endFault = func() error {
		if tries.Add(1) <= 2 {
			return errors.New("database or disk is full")
		}
		return nil
	}
	s := launch(t, r, LaunchRequest{Actor: "fail"})
	r.Wait()
	got, _, _ := r.Store.Get(context.Background(), s.ID)
	if got.Status != ir.Failed || got.ExitCode == nil || *got.ExitCode != 3 || tries.Load() != 3 {
		t.Fatalf("%s exit %v (%q) after %d tries", got.Status, got.ExitCode, got.Reason, tries.Load())
	}
	if _, err := os.Stat(r.outcomePath(s.ID)); !os.IsNotExist(err) {
		t.Errorf("an outcome file is left: %v", err)
	}
}
