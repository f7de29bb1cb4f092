package local

import (
	"context"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestLaunchTakesTheWriteLockFourTimes: a session that ends at once costs the database four
// write transactions, each of which every other process's writes wait for: its record, its
// supervisor, its process, its end (with the audit log's line and its pauses dropped, in the
// same write). It took nine: the end's line and the pauses each in a write of their own, and the
// reads of a session's end (does it settle a review, a proposal?) in write transactions.
func TestLaunchTakesTheWriteLockFourTimes(t *testing.T) {
	dir := installFleet(t, fleet{yml: trivialYAML, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	before := r.Store.Writes()
	res, err := r.Launch(ctx, LaunchRequest{Actor: "worker", Ref: "1"})
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	if n := r.Store.Writes() - before; n != 4 {
		t.Errorf("a launch took %d write transactions, want 4 (record, supervisor, process, end)", n)
	}
	s, ok, err := r.Store.Get(ctx, res.Session.ID)
	if err != nil || !ok || s.Status != ir.Done {
		t.Fatalf("session %s: %+v %v %v, want done", res.Session.ID, s, ok, err)
	}
	evs, err := r.Store.Events(ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ended int
	for _, e := range evs {
		if e.Kind == "ended" && strings.HasPrefix(e.Message, "done") {
			ended++
		}
	}
	if ended != 1 {
		t.Errorf("the audit log has %d \"ended\" lines (done) for %s, want 1: %+v", ended, s.ID, evs)
	}
}
