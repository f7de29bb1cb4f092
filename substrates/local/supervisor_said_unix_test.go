//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

// A detached supervisor that exits before it can record anything (an installation it refuses to
// read) leaves what it said on stderr, and the reconciliation that finds it gone gives that as
// the session's reason: it said "its runner died before starting it", which was false (newc9).
// A supervisor that ran its session leaves no such file.
func TestASupervisorsLastWordsAreTheReason(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	exe := filepath.Join(t.TempDir(), "autonomy")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho 'autonomy: runner.json was edited after autonomy generated it' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{Detach: true, Exe: exe})
	ctx := context.Background()
	s := launch(t, r, LaunchRequest{Actor: "job"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _, err := r.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Ended() {
			if got.Status != ir.Failed || got.Reason != "its supervisor exited before starting it: autonomy: runner.json was edited after autonomy generated it" {
				t.Fatalf("ended %s: %s", got.Status, got.Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never ended: %+v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The real supervisor, once it ran its session, removes its empty stderr file.
	r2 := newRunner(t, dir, Options{Detach: true, Exe: builtAutonomy(t)})
	s2 := waitEnded(t, r2, launch(t, r2, LaunchRequest{Actor: "job"}).ID)
	if s2.Status != ir.Done {
		t.Fatalf("the job ended %s: %s", s2.Status, s2.Reason)
	}
	path, _ := r2.In.supervisorErrPath(s2.ID)
	deadline = time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the supervisor's empty stderr file stayed: %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Lstat(strings.TrimSuffix(path, ".supervisor") + ".log"); err != nil {
		t.Errorf("the session's log: %v", err)
	}
}
