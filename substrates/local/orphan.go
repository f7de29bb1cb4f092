package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// reconcile finds a session whose runner died: its process, and every process of its group started
// for it, is gone with nobody to record how it ended (failed), or it outlived its timeout with nobody to stop it (TERM now, failed, KILL after
// the grace period). A step playbook session is continued instead of failed, by a new supervisor
// (resume.go). It also finishes, for a dead supervisor, a stop under way: KILL to what is left of
// the group once the stop's grace period is over.
func (r *Runner) reconcile(ctx context.Context, s store.Session) (store.Session, error) {
	if r.blind || s.Kind != "agent" || s.Status.Ended() && s.StopBy.IsZero() || parked(s) || r.supervisor.alive(s) {
		return s, nil
	}
	if s.Status.Ended() {
		return r.finishStop(ctx, s)
	}
	if s.PID == 0 || !proc.Alive(s.PID, s.PIDStart) {
		if found, err := r.lateEnd(ctx, s); found {
			// Its supervisor saw it end but could not write the store (outcome.go).
			return r.reread(ctx, s, err)
		}
	}
	var reason string
	var stopBy time.Time
	switch {
	case s.PID == 0:
		if s.SupervisorPID == 0 && r.opts.Now().Sub(s.CreatedAt) < startGrace {
			return s, nil // its launcher is still starting the supervisor
		}
		reason = "its runner died before starting it"
		if said := r.In.supervisorSaid(s.ID); said != "" {
			reason = "its supervisor exited before starting it: " + said
		}
	case !proc.Alive(s.PID, s.PIDStart) && !sessionGroup(s):
		// Its whole group is gone. (While a process its agent left behind, a background child,
		// still lives, the session runs on, orphaned, below: it keeps the root from another
		// agent, rootOrphan.)
		reason = "its process ended while no runner was watching it (the supervising runner died); exit status unknown"
	case s.Timeout > 0 && r.opts.Now().Sub(s.StartedAt) > s.Timeout:
		stopBy = time.Now().Add(r.In.grace())
		reason = fmt.Sprintf("timed out after %s; stopped by reconciliation since its runner died (TERM, then KILL after %s)", s.Timeout, r.In.grace())
	default:
		if !r.playbooks().continuable(s) {
			return s, nil // still running on its own: it stays tracked
		}
		// A step playbook's run reports only to its supervisor: with that one dead it can never
		// end well, so a new supervisor takes over below (resume.go).
	}
	if stopBy.IsZero() && r.playbooks().continuable(s) {
		return r.playbooks().takeOver(ctx, s) // it continues at its next unfinished step (resume.go)
	}
	ended, err := r.end(ctx, s.ID, ir.Failed, reason, "", nil, stopBy)
	if err != nil {
		return s, err // nothing was recorded: no stop either
	}
	_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "orphaned", Message: reason})
	if !stopBy.IsZero() && sessionGroup(s) {
		_ = proc.Term(s.PID) // recorded first: whoever reconciles next KILLs at stopBy
	} else if ended {
		r.reclaim(ctx, s) // with a stop under way, once it is over (finishStop)
	}
	return r.reread(ctx, s, nil)
}

// reread reads session s again after a reconciliation that ended with failed (nil or an
// *UnrecordedError); when that failed, s is as the store has it.
func (r *Runner) reread(ctx context.Context, s store.Session, failed error) (store.Session, error) {
	if failed != nil {
		return s, failed
	}
	n, _, err := r.Store.Get(ctx, s.ID)
	return n, err
}

// startGrace is how long a session may wait for its supervisor before it counts as never started.
const startGrace = 30 * time.Second

// reclaimWorktree does for a session whose supervisor died what that supervisor does when a
// session ends: it removes the session's worktree, keeping any work done in it (a worktree with
// uncommitted changes is kept; commits on a detached HEAD no branch holds are saved as the branch
// autonomy/ACTOR/ID; a --branch keeps its commits), and says what it did in the event
// "worktree". It leaves alone a worktree its process group still works in, and any path other
// than the one the runner gives the session (the store is writable by an agent working in the
// installation root). The caller is the one process that recorded the session's end, or that
// finished its stop.
func (r *Runner) reclaimWorktree(ctx context.Context, s store.Session) {
	path := r.In.Path(WorktreeDir + "/" + s.ID)
	if !s.Worktree || filepath.Clean(s.Workdir) != path {
		return
	}
	var note string
	if s.PID > 0 && len(proc.Members(s.PID)) > 0 && sessionGroup(s) {
		note = fmt.Sprintf("its supervisor died; kept its worktree %s: processes of its group (%d) still run there; remove it with git worktree remove %s once they are gone", path, s.PID, path)
	} else {
		note = r.removeOrphanWorktree(ctx, s, path)
	}
	if note != "" {
		_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "worktree", Message: note})
	}
}

// removeOrphanWorktree removes the worktree at path of session s and says what became of it.
func (r *Runner) removeOrphanWorktree(ctx context.Context, s store.Session, path string) string {
	repo, err := gitws.Repo(r.In.Dir)
	if err != nil {
		return fmt.Sprintf("its supervisor died; its worktree %s was not removed: %v", path, err)
	}
	if _, err := os.Lstat(path); os.IsNotExist(err) {
		_, _, _ = gitws.Remove(ctx, repo, path, "", "") // gone already: git's record of it is pruned
		return ""
	}
	r.unseedLeft(ctx, repo, path)
	note, saved, err := gitws.Remove(ctx, repo, path, "", "autonomy/"+s.Actor+"/"+s.ID)
	r.recordSaved(s.ID, saved)
	if err != nil {
		return fmt.Sprintf("its supervisor died; its worktree %s was not removed: %v", path, err)
	}
	if note == "" {
		note = "removed its worktree " + path
	}
	if s.Branch != "" {
		note += fmt.Sprintf("; its branch %s keeps its commits", s.Branch)
	}
	return "its supervisor died, so reconciliation dealt with its worktree: " + note
}

// unseedLeft removes from the worktree at path the copies of the installation's files its
// supervisor put there (seed) and could not remove: those git does not track there and that are
// still the same as the installation's. What is left would keep the worktree (untracked files).
func (r *Runner) unseedLeft(ctx context.Context, repo, path string) {
	var m struct {
		Files map[string]string `json:"files"`
	}
	if err := readJSON(r.In.Dir, ManifestPath, &m); err != nil {
		return
	}
	paths := []string{ManifestPath}
	for p := range m.Files {
		if filepath.IsLocal(filepath.FromSlash(p)) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	tracked, err := gitws.Tracked(ctx, repo, path, paths)
	if err != nil {
		return
	}
	src, err := os.OpenRoot(r.In.Dir)
	if err != nil {
		return
	}
	defer src.Close()
	dst, err := os.OpenRoot(path)
	if err != nil {
		return
	}
	defer dst.Close()
	dirs := map[string]bool{}
	for _, p := range paths {
		rel := filepath.FromSlash(p)
		if tracked[p] {
			continue
		}
		have, err := dst.ReadFile(rel)
		if err != nil {
			continue
		}
		if want, err := src.ReadFile(rel); err == nil && bytes.Equal(have, want) && dst.Remove(rel) == nil {
			for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
				dirs[d] = true
			}
		}
	}
	// The folders the copies needed, deepest first, each only when empty.
	order := make([]string, 0, len(dirs))
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool { return len(order[i]) > len(order[j]) })
	for _, d := range order {
		_ = dst.Remove(d)
	}
}
