//go:build unix

package main

import (
	"context"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// settleSessions cancels every session of the installation dir still in flight and waits until
// none has a supervisor left: supervisors are processes of their own, which may still be adding,
// seeding or removing a worktree (a session queued behind an agent of the installation root
// starts late) when a test is over and its directories are removed.
func settleSessions(t *testing.T, dir string) {
	t.Helper()
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	all, err := st.List(ctx, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if !s.Status.Ended() {
			run(t, "runner", "--dir", dir, "cancel", s.ID)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		all, err := st.List(ctx, store.ListOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		busy := 0
		for _, s := range all {
			if s.SupervisorPID > 0 && proc.Alive(s.SupervisorPID, s.SupervisorStart) {
				busy++
			}
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d supervisors still run 30 s after their sessions were cancelled", busy)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
