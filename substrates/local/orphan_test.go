//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// orphanWorktree records a session of actor whose supervisor prepared its worktree (seeded with
// the installation, as on any launch) and died, its process gone; work then runs in the
// worktree, as its agent would have.
func orphanWorktree(t *testing.T, r *Runner, actor, branch, work string) store.Session {
	t.Helper()
	ctx := context.Background()
	dead := deadProcess(t)
	var s store.Session
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: actor, Kind: "agent", Status: ir.Running, Origin: "operator", Branch: branch,
			PID: dead.pid, PIDStart: dead.start, SupervisorPID: dead.pid, SupervisorStart: dead.start,
			StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.In.ReloadActor(actor)
	if err != nil {
		t.Fatal(err)
	}
	path, _, err := r.workspace(ctx, s, cfg) // its cleanup dies with the supervisor
	if err != nil {
		t.Fatal(err)
	}
	if work != "" {
		gitRun(t, path, "-c", "user.email=a@example.com", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", work)
	}
	return s
}

// A session whose supervisor was killed after it made its worktree is reconciled failed, and
// its worktree removed: a detached one's commits saved on autonomy/ACTOR/ID first, a --branch
// kept, one with nothing new removed with no branch made; the event "worktree" says which.
func TestReconcileReclaimsTheWorktree(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, wsFleet, true)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	saved := orphanWorktree(t, r, "iso", "", "work of the dead")
	plain := orphanWorktree(t, r, "iso", "", "")
	onBranch := orphanWorktree(t, r, "iso", "feature", "work on feature")
	other := newRunner(t, dir, Options{}) // the operator's next reconciliation (runner list)
	if _, err := other.List(ctx, false); err != nil {
		t.Fatal(err)
	}
	worktrees := gitRun(t, dir, "worktree", "list")
	for _, s := range []store.Session{saved, plain, onBranch} {
		got, _, _ := r.Store.Get(ctx, s.ID)
		if got.Status != ir.Failed || !strings.Contains(got.Reason, "supervising runner died") {
			t.Errorf("%s: %s %q", s.ID, got.Status, got.Reason)
		}
		if strings.Contains(worktrees, s.ID) {
			t.Errorf("the worktree of %s is still there:\n%s", s.ID, worktrees)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, WorktreeDir, saved.ID)); err == nil {
		t.Error("the worktree folder is still there")
	}
	branches := gitRun(t, dir, "branch", "--list", "--format=%(refname:short) %(subject)")
	if !strings.Contains(branches, "autonomy/iso/"+saved.ID+" work of the dead") || !strings.Contains(branches, "feature work on feature") {
		t.Errorf("branches:\n%s", branches)
	}
	if strings.Contains(branches, plain.ID) {
		t.Errorf("a branch was made for a worktree with no new commit:\n%s", branches)
	}
	for id, want := range map[string]string{
		saved.ID:    "saved the commits of the worktree " + filepath.Join(dir, WorktreeDir, saved.ID) + " as the branch autonomy/iso/" + saved.ID,
		plain.ID:    "removed its worktree",
		onBranch.ID: "its branch feature keeps its commits",
	} {
		if msg := eventMessages(t, r, id, "worktree"); !strings.Contains(msg, want) || !strings.Contains(msg, "supervisor died") {
			t.Errorf("%s: worktree events %q, want %q", id, msg, want)
		}
	}
}

// eventMessages joins the messages of session id's events of kind.
func eventMessages(t *testing.T, r *Runner, id, kind string) string {
	t.Helper()
	es, err := r.Store.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Kind == kind {
			out = append(out, e.Message)
		}
	}
	return strings.Join(out, "\n")
}
