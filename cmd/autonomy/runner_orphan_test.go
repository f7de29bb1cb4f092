//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// calmFleet is an installation with one skill actor, calm, working in the installation root.
const calmFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  calm:
    behavior: skills/calm
    triggers: [{ dispatch: true }]
    result: { schema: none } # these tests are about the root workspace, not results
`

// rootRig is calmFleet run by an agent script: the store, and the script's folder, where it
// notes its trace and waits for its release files.
type rootRig struct {
	t        *testing.T
	dir, bin string
	env      []string
	st       *store.Store
	launched []string
}

// newRootRig installs calmFleet with agent as its agent CLI. Whatever the test's outcome, no
// agent it launched outlives it: their release files go with bin, so their groups are killed.
func newRootRig(t *testing.T, agent string) *rootRig {
	r := &rootRig{t: t, dir: runnerFleet(t, calmFleet, map[string]string{"skills/calm/SKILL.md": "# calm\nWork.\n"}), bin: t.TempDir()}
	if err := os.WriteFile(filepath.Join(r.bin, "agent"), []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	r.env = []string{local.AgentEnv + `=["` + filepath.Join(r.bin, "agent") + `"]`}
	st, err := store.Open(local.DBPath(r.dir))
	if err != nil {
		t.Fatal(err)
	}
	r.st = st
	t.Cleanup(func() { st.Close() })
	t.Cleanup(func() {
		for _, id := range r.launched {
			if s, _, err := st.Get(context.Background(), id); err == nil && s.PID > 0 {
				_ = syscall.Kill(-s.PID, syscall.SIGKILL)
			}
		}
	})
	return r
}

// launch launches calm and returns the session's id.
func (r *rootRig) launch() string {
	r.t.Helper()
	out, errOut, code := cli(r.t, r.env, "runner", "--dir", r.dir, "launch", "calm")
	if code != 0 {
		r.t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.Fields(out)[0]
	r.launched = append(r.launched, id)
	return id
}

// touch creates the file name in the agent's folder (a release-SESSION, say).
func (r *rootRig) touch(name string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.bin, name), nil, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// trace is what the agents noted.
func (r *rootRig) trace() string {
	b, _ := os.ReadFile(filepath.Join(r.bin, "trace"))
	return string(b)
}

// rootAgent stands in for an agent CLI working in the installation root: it notes its start
// and end in trace, writes its pid to started-SESSION, and waits until release-SESSION exists.
const rootAgent = `#!/bin/sh
dir=$(dirname "$0")
cat > /dev/null
echo "start $AUTONOMY_SESSION" >> "$dir/trace"
echo $$ > "$dir/started.tmp" && mv "$dir/started.tmp" "$dir/started-$AUTONOMY_SESSION"
while [ ! -f "$dir/release-$AUTONOMY_SESSION" ]; do sleep 0.02; done
echo "end $AUTONOMY_SESSION" >> "$dir/trace"
`

// TestRootLockOutlivesTheSupervisor: two sessions working in the installation root, the second
// queued; the first's supervisor is SIGKILLed while its agent works. The second keeps waiting,
// queued, for as long as that agent's process group lives (it says so in an event naming the
// first), and starts once it is gone; the first is then reconciled failed.
func TestRootLockOutlivesTheSupervisor(t *testing.T) {
	r := newRootRig(t, rootAgent)
	dir, bin, env, st, launch, trace := r.dir, r.bin, r.env, r.st, r.launch, r.trace
	ctx := context.Background()
	release := func(id string) { r.touch("release-" + id) }

	a := launch()
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(bin, "release-"+a), nil, 0o644) })
	agentA := waitPid(t, filepath.Join(bin, "started-"+a))
	b := launch()
	release(b) // once started, the second agent ends at once
	waitStore(t, st, b, "queued", func(s store.Session, _ []store.Event) bool { return local.Queued(s) })
	killSupervisor(t, st, a)

	// The second session's supervisor takes the lock the dead one dropped, finds the first's
	// agent still at work in the root, and keeps waiting: an event says so.
	waitStore(t, st, b, "an event naming the orphaned agent", func(s store.Session, es []store.Event) bool {
		if strings.Contains(trace(), "start "+b) {
			t.Fatalf("the second agent started while the first one still works in the root:\n%s", trace())
		}
		for _, e := range es {
			if e.Kind == "queued" && strings.Contains(e.Message, "session "+a) && strings.Contains(e.Message, "supervisor died") {
				return true
			}
		}
		return false
	})
	out, errOut, code := cli(t, env, "runner", "--dir", dir, "list")
	if code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	if !strings.Contains(out, a) || !strings.Contains(out, b) || !strings.Contains(out, "queued") {
		t.Errorf("list:\n%s", out)
	}
	if s, _, _ := st.Get(ctx, b); !local.Queued(s) || strings.Contains(trace(), "start "+b) || !proc.Alive(agentA, mustStart(t, agentA)) {
		t.Fatalf("the second session: %s pid %d; trace:\n%s", s.Status, s.PID, trace())
	}

	release(a)
	gb := waitParked(t, st, b)
	if gb.Status != ir.Done {
		log, _ := os.ReadFile(gb.LogPath)
		t.Fatalf("the second session ended %s: %s\n%s", gb.Status, gb.Reason, log)
	}
	if got, want := trace(), "start "+a+"\nend "+a+"\nstart "+b+"\nend "+b+"\n"; got != want {
		t.Errorf("the agents overlapped:\n%s", got)
	}
	if _, _, code := cli(t, env, "runner", "--dir", dir, "list"); code != 0 {
		t.Fatal("list failed")
	}
	if ga, _, _ := st.Get(ctx, a); ga.Status != ir.Failed || !strings.Contains(ga.Reason, "supervising runner died") {
		t.Errorf("the first session: %s %q", ga.Status, ga.Reason)
	}
}

// waitPid waits until path holds a pid and returns it.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if raw, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
				return pid
			}
		}
	}
	t.Fatalf("%s never held a pid", path)
	return 0
}

func mustStart(t *testing.T, pid int) uint64 {
	t.Helper()
	start, err := proc.StartTime(pid)
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	return start
}

// waitStore waits until session id and its events satisfy ok.
func waitStore(t *testing.T, st *store.Store, id, what string, ok func(store.Session, []store.Event) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s, _, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		es, err := st.Events(context.Background(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ok(s, es) {
			return
		}
	}
	t.Fatalf("session %s never got to: %s", id, what)
}

// bgAgent is rootAgent that first starts a background child, in its process group, which works
// in the root (noting it in trace) until bgrelease-SESSION exists, then notes "bgend SESSION".
const bgAgent = `#!/bin/sh
dir=$(dirname "$0")
cat > /dev/null
echo "start $AUTONOMY_SESSION" >> "$dir/trace"
( while [ ! -f "$dir/bgrelease-$AUTONOMY_SESSION" ]; do sleep 0.02; done; echo "bgend $AUTONOMY_SESSION" >> "$dir/trace" ) &
echo $$ > "$dir/started.tmp" && mv "$dir/started.tmp" "$dir/started-$AUTONOMY_SESSION"
while [ ! -f "$dir/release-$AUTONOMY_SESSION" ]; do sleep 0.02; done
echo "end $AUTONOMY_SESSION" >> "$dir/trace"
`

// TestOrphanGroupOutlivesItsLeader: a root agent leaves a background child working in the root
// and exits after its supervisor was SIGKILLed, while a second root session queues. A
// reconciliation then (list) must not fail the first session, which would free the root: it
// stays running, orphaned, while its group holds a process started for it, and the second
// starts only once that child is gone; the next reconciliation then fails the first.
func TestOrphanGroupOutlivesItsLeader(t *testing.T) {
	r := newRootRig(t, bgAgent)
	dir, bin, env, st, launch, trace, touch := r.dir, r.bin, r.env, r.st, r.launch, r.trace, r.touch
	ctx := context.Background()

	a := launch()
	t.Cleanup(func() { touch("release-" + a); touch("bgrelease-" + a) })
	agentA := waitPid(t, filepath.Join(bin, "started-"+a))
	startA := mustStart(t, agentA)
	b := launch()
	touch("release-" + b)
	touch("bgrelease-" + b)
	waitStore(t, st, b, "queued", func(s store.Session, _ []store.Event) bool { return local.Queued(s) })
	killSupervisor(t, st, a)
	touch("release-" + a) // the leader exits; its background child works on
	for deadline := time.Now().Add(30 * time.Second); proc.Alive(agentA, startA); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first agent did not exit")
		}
	}
	out, errOut, code := cli(t, env, "runner", "--dir", dir, "list")
	if code != 0 || !strings.Contains(out, a) {
		t.Fatalf("list: %d\n%s\n%s", code, out, errOut)
	}
	if s, _, _ := st.Get(ctx, a); s.Status != ir.Running {
		t.Fatalf("reconciled while a process of its group works in the root: %s %q", s.Status, s.Reason)
	}
	touch("bgrelease-" + a)
	if gb := waitParked(t, st, b); gb.Status != ir.Done {
		t.Fatalf("the second session ended %s: %s", gb.Status, gb.Reason)
	}
	if got := trace(); !strings.Contains(got, "bgend "+a+"\nstart "+b+"\n") {
		t.Errorf("the second agent started while the first one's child worked in the root:\n%s", got)
	}
	if _, _, code := cli(t, env, "runner", "--dir", dir, "list"); code != 0 {
		t.Fatal("list failed")
	}
	if ga, _, _ := st.Get(ctx, a); ga.Status != ir.Failed || !strings.Contains(ga.Reason, "supervising runner died") {
		t.Errorf("the first session: %s %q", ga.Status, ga.Reason)
	}
}
