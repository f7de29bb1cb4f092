//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

// prepareFleet's actor works in a worktree of its own, after a prelaunch that, when the file
// slow-prelaunch exists in the installation, writes its pid and sleeps; its agent leaves a mark.
var prepareFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  slow:
    behavior: ./agent.sh
    triggers: [{ dispatch: true }]
    execution: { workspace: isolated }
    prelaunch: 'if [ -f "$AUTONOMY_DIR/slow-prelaunch" ]; then echo $$ > "$AUTONOMY_DIR/prelaunch-$AUTONOMY_SESSION"; sleep 30; fi'
policy:
  box:
    local: { graceSeconds: 1 }
`,
	files: map[string]string{"agent.sh": "#!/bin/sh\ntouch \"$AUTONOMY_DIR/agent-ran-$AUTONOMY_SESSION\"\n" + scriptDone},
}

// A cancel that arrives while a session is prepared (its worktree added, its prelaunch running,
// about to start) ends it cancelled: no agent process starts afterwards, the prelaunch's group is
// stopped, the worktree is removed as on any cancel, and the supervisor returns.
func TestCancelWhilePreparing(t *testing.T) {
	for _, phase := range []string{"workspace", "prelaunch", "during-prelaunch", "start"} {
		t.Run(phase, func(t *testing.T) {
			dir := installFleet(t, prepareFleet, true)
			r := newRunner(t, dir, Options{})
			reached, release := make(chan string, 1), make(chan struct{})
			if phase == "during-prelaunch" {
				if err := os.WriteFile(filepath.Join(dir, "slow-prelaunch"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				r.supervisor.phaseHook = func(p, id string) {
					if p == phase {
						reached <- id
						<-release
					}
				}
			}
			ctx := context.Background()
			s := launch(t, r, LaunchRequest{Actor: "slow"})
			prelaunchPID := 0
			if phase == "during-prelaunch" {
				prelaunchPID = waitPID(t, filepath.Join(dir, "prelaunch-"+s.ID))
			} else {
				<-reached
			}
			began := time.Now()
			if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
				t.Fatalf("cancel: %v %v", ok, err)
			}
			close(release)
			r.Wait()
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("the supervisor returned %s after the cancel", d)
			}
			got, _, _ := r.Store.Get(ctx, s.ID)
			if got.Status != ir.Cancelled || got.PID != 0 {
				t.Errorf("the session is %s with pid %d, want cancelled with no process", got.Status, got.PID)
			}
			if _, err := os.Stat(filepath.Join(dir, "agent-ran-"+s.ID)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the agent ran after the cancel: %v", err)
			}
			if prelaunchPID > 0 && alive(prelaunchPID) {
				t.Errorf("the prelaunch (pid %d) outlived the cancel", prelaunchPID)
			}
			if _, err := os.Stat(got.Workdir); got.Worktree && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("its worktree %s is still there: %v", got.Workdir, err)
			}
			if list := gitRun(t, dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
				t.Errorf("a worktree is left:\n%s", list)
			}
			if phase != "workspace" && !got.Worktree {
				t.Errorf("the session records no worktree: %+v", got)
			}
		})
	}
}

// waitPID reads a pid a process wrote to path.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	for i := 0; i < 1000; i++ {
		data, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was never written", path)
	return 0
}

// A cancel at any moment of a launch: a session cancelled with no process recorded never ran
// its agent (the start and its record are one transaction that a cancel cannot split), and no
// worktree is left.
func TestCancelAtAnyMoment(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, prepareFleet, true)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	for i := 0; i < 8; i++ {
		s := launch(t, r, LaunchRequest{Actor: "slow"})
		time.Sleep(time.Duration(i*7) * time.Millisecond)
		if _, err := r.Cancel(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		r.Wait()
		got, _, _ := r.Store.Get(ctx, s.ID)
		_, ran := os.Stat(filepath.Join(dir, "agent-ran-"+s.ID))
		if got.Status == ir.Cancelled && got.PID == 0 && ran == nil {
			t.Errorf("session %s: cancelled before it started, and its agent ran", s.ID)
		}
		if !got.Status.Ended() {
			t.Errorf("session %s is still %s", s.ID, got.Status)
		}
	}
	if list := gitRun(t, dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("a worktree is left:\n%s", list)
	}
}

// A pause that comes while a session is prepared holds its agent unstarted: no process runs
// until it is resumed, and none at all when it is cancelled meanwhile. Started and then stopped,
// the agent ran until the STOP landed: on a loaded machine, to its end, and a session paused
// before it started ended done.
func TestPauseWhilePreparingHoldsTheStart(t *testing.T) {
	for _, then := range []string{"resume", "cancel"} {
		t.Run(then, func(t *testing.T) {
			dir := installFleet(t, prepareFleet, true)
			r := newRunner(t, dir, Options{})
			reached, release, held := make(chan string, 1), make(chan struct{}), make(chan struct{})
			r.supervisor.phaseHook = func(p, id string) {
				switch p {
				case "start": // about to start the agent: the pause comes now
					reached <- id
					<-release
				case "held":
					close(held)
				}
			}
			ctx := context.Background()
			s := launch(t, r, LaunchRequest{Actor: "slow"})
			<-reached
			if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Paused}); err != nil {
				t.Fatal(err)
			}
			close(release)
			waitHeld(t, r, s.ID, held)
			mark := filepath.Join(dir, "agent-ran-"+s.ID)
			if got, _, _ := r.Store.Get(ctx, s.ID); got.Status != ir.Paused || got.PID != 0 {
				t.Fatalf("the held session is %s with pid %d, want paused with no process", got.Status, got.PID)
			}
			if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the agent ran while its session was paused: %v", err)
			}
			if log := sessionLogOf(r, s.ID); !strings.Contains(log, "paused before its agent started: it starts when resumed") {
				t.Errorf("its log does not say why it waits:\n%s", log)
			}
			if then == "cancel" {
				if ok, err := r.Cancel(ctx, s.ID); !ok || err != nil {
					t.Fatalf("cancel: %v %v", ok, err)
				}
				r.Wait()
				got, _, _ := r.Store.Get(ctx, s.ID)
				if _, err := os.Stat(mark); got.Status != ir.Cancelled || got.PID != 0 || !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("cancelled while held, the session is %s with pid %d (the agent's mark: %v)", got.Status, got.PID, err)
				}
				return
			}
			if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Running}); err != nil {
				t.Fatal(err)
			}
			if got := waitEnded(t, r, s.ID); got.Status != ir.Done || got.PID == 0 {
				t.Fatalf("resumed, the session ended %s (%s) with pid %d", got.Status, got.Reason, got.PID)
			}
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("resumed, the agent did not run: %v", err)
			}
			r.Wait()
		})
	}
}

// waitHeld waits until the supervisor holds session id's start (held closed); it fails the test
// at once should the agent start, or the session end, instead.
func waitHeld(t *testing.T, r *Runner, id string, held <-chan struct{}) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-held:
			return
		case <-deadline:
			t.Fatalf("the supervisor never held the paused session %s", id)
		case <-poll.C:
			if s, _, _ := r.Store.Get(context.Background(), id); s.PID != 0 || s.Status.Ended() {
				_, _ = r.Cancel(context.Background(), id) // its stopped agent must not outlive the test
				t.Fatalf("paused before its start, the session was started anyway: %s, pid %d (%s)", s.Status, s.PID, s.Reason)
			}
		}
	}
}
