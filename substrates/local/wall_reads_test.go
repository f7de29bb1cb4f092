//go:build unix

package local

import (
	"context"
	"os"
	"testing"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// TestWallReadsTheSessionsInFlightOnce: the wall's checks of a process (the CLI's: is its pid
// namespace the runner's, was it made after a session started? a supervisor's: does it run
// inside a session, can it see their ancestry?) read the sessions in flight once for all of
// them. Each check read them again: three reads in a supervisor, two in the CLI.
func TestWallReadsTheSessionsInFlightOnce(t *testing.T) {
	dir := installFleet(t, fleet{yml: trivialYAML, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	self := os.Getpid()
	start, err := proc.StartTime(self)
	if err != nil {
		t.Fatal(err)
	}
	// In flight and supervised by this live process, so that every check has a session to
	// look at; the other is one to take over, its supervisor gone.
	live := store.Session{Actor: "worker", Kind: "agent", Status: ir.Running, SupervisorPID: self, SupervisorStart: start}
	orphan := store.Session{Actor: "worker", Kind: "agent", Status: ir.Running}
	err = r.Store.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Insert(&live); err != nil {
			return err
		}
		return tx.Insert(&orphan)
	})
	if err != nil {
		t.Fatal(err)
	}

	before := r.Store.Stats().Runs
	if s, why, blind := outOfSight(ctx, r.Store, r.In); blind {
		t.Fatalf("this process is taken for out of sight of %s: %s", s.ID, why)
	}
	if n := r.Store.Stats().Runs - before; n != 1 {
		t.Errorf("the CLI's pid-namespace checks ran %d statements, want 1 (the sessions in flight, read once)", n)
	}

	before = r.Store.Stats().Runs
	if err := r.mayTakeOver(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if n := r.Store.Stats().Runs - before; n != 1 {
		t.Errorf("a supervisor's take-over checks ran %d statements, want 1 (the sessions in flight, read once)", n)
	}
}
