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
	files: map[string]string{"agent.sh": "#!/bin/sh\ntouch \"$AUTONOMY_DIR/agent-ran-$AUTONOMY_SESSION\"\n"},
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
