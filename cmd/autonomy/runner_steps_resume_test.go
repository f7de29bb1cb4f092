//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

const resumeFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  writer:
    behavior: playbooks/three.md
    triggers: [{ dispatch: true }]
`

const threeSteps = "# Three\n\n## STEP 1: One\n\nDo one.\n\n## STEP 2: Two\n\nDo two.\n\n## STEP 3: Three\n\nDo three.\n"

// blockingAgent stands in for an agent CLI: it counts its runs (a side effect a step must not
// repeat), and in step 2 writes its pid to blocked and waits until release exists.
const blockingAgent = `#!/bin/sh
dir=$(dirname "$0")
cat > /dev/null
echo "$AUTONOMY_STEP" >> "$dir/count"
if [ "$AUTONOMY_STEP" = 2 ]; then
  echo $$ > "$dir/blocked.tmp" && mv "$dir/blocked.tmp" "$dir/blocked"
  while [ ! -f "$dir/release" ]; do sleep 0.02; done
fi
echo "output of step $AUTONOMY_STEP"
`

type resumeEnv struct {
	t        *testing.T
	dir, bin string
	// tmp is the TMPDIR of the runner processes (env): noTempsLeft checks it.
	tmp string
	env []string
	st  *store.Store
}

func newResumeEnv(t *testing.T) *resumeEnv {
	t.Helper()
	dir := runnerFleet(t, resumeFleet, map[string]string{"playbooks/three.md": threeSteps})
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "agent"), []byte(blockingAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tmp := t.TempDir()
	return &resumeEnv{t: t, dir: dir, bin: bin, st: st, tmp: tmp,
		env: []string{local.AgentEnv + `=["` + filepath.Join(bin, "agent") + `"]`, "TMPDIR=" + tmp}}
}

// noTempsLeft waits until tmp, the TMPDIR of the runner processes of the installation in dir
// (env), is empty, reconciling the installation (runner list) meanwhile: a step playbook
// session's runs make their folders there, which are removed when the session ends, by its
// supervisor or, when that one died, by whoever continues or ends the session.
func noTempsLeft(t *testing.T, env []string, dir, tmp string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			out, _, _ := cli(t, env, "runner", "--dir", dir, "list", "--all")
			t.Fatalf("the runs left their temporary folders in %s: %v\n%s", tmp, names, out)
		}
		if _, errOut, code := cli(t, env, "runner", "--dir", dir, "list"); code != 0 {
			t.Fatalf("list: %d %s", code, errOut)
		}
	}
}

func (e *resumeEnv) launch() string {
	e.t.Helper()
	out, errOut, code := cli(e.t, e.env, "runner", "--dir", e.dir, "launch", "writer")
	if code != 0 {
		e.t.Fatalf("launch: %d %s", code, errOut)
	}
	return strings.Fields(out)[0]
}

// blocked waits until step 2's agent waits for release, and returns its pid (the marker is
// consumed: the next wait is for the next invocation).
func (e *resumeEnv) blocked() int {
	e.t.Helper()
	path := filepath.Join(e.bin, "blocked")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if raw, err := os.ReadFile(path); err == nil {
			os.Remove(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			return pid
		}
		if time.Now().After(deadline) {
			count, _ := os.ReadFile(filepath.Join(e.bin, "count"))
			e.t.Fatalf("step 2's agent never started (count %q)", count)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killSupervisor SIGKILLs the session's supervisor and waits until it is gone.
func (e *resumeEnv) killSupervisor(id string) store.Session {
	e.t.Helper()
	return killSupervisor(e.t, e.st, id)
}

func killSupervisor(t *testing.T, st *store.Store, id string) store.Session {
	t.Helper()
	s, _, err := st.Get(context.Background(), id)
	if err != nil || s.SupervisorPID <= 0 {
		t.Fatalf("session %s has no supervisor (%v)", id, err)
	}
	if err := syscall.Kill(s.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); proc.Alive(s.SupervisorPID, s.SupervisorStart); {
		if time.Now().After(deadline) {
			t.Fatalf("supervisor %d outlived SIGKILL", s.SupervisorPID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

// gone waits until pid is no more.
func gone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *resumeEnv) count() string {
	raw, _ := os.ReadFile(filepath.Join(e.bin, "count"))
	return strings.Join(strings.Fields(string(raw)), ",")
}

func (e *resumeEnv) events(id, kind string) []store.Event {
	e.t.Helper()
	es, err := e.st.Events(context.Background(), id, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []store.Event
	for _, ev := range es {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// TestRunnerStepsResumeAfterCrash: the supervisor of a step playbook session is SIGKILLed while
// step 2's agent works; three processes then reconcile at once (runner list). Exactly one claims
// the session and starts a new supervisor, which stops the old run (its step's agent with it)
// and continues at step 2: step 1's side effect happened exactly once, step 2 ran again (its
// output was never recorded), and the session is done with one "resumed" event naming step 2.
func TestRunnerStepsResumeAfterCrash(t *testing.T) {
	t.Parallel()
	e := newResumeEnv(t)
	id := e.launch()
	oldAgent := e.blocked()
	old := e.killSupervisor(id)

	var wg sync.WaitGroup
	outs := make([]string, 3)
	for i := range outs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, errOut, code := cli(t, e.env, "runner", "--dir", e.dir, "list")
			if code != 0 {
				t.Errorf("list: %d %s", code, errOut)
			}
			outs[i] = out
		}(i)
	}
	wg.Wait()
	for _, out := range outs {
		if !strings.Contains(out, id) || !strings.Contains(out, "running") {
			t.Errorf("list does not show %s running:\n%s", id, out)
		}
	}
	e.blocked() // step 2 again, under the new supervisor
	gone(t, oldAgent, "the old run's step 2 agent")
	if len(proc.Members(old.PID)) > 0 {
		t.Fatalf("the old run's group %d is still there: %v", old.PID, proc.Members(old.PID))
	}
	s, _, _ := e.st.Get(context.Background(), id)
	if s.Status != ir.Running || s.SupervisorPID == old.SupervisorPID || !proc.Alive(s.SupervisorPID, s.SupervisorStart) {
		t.Fatalf("after reconciliation: %s, supervisor %d (old %d)", s.Status, s.SupervisorPID, old.SupervisorPID)
	}
	out, _, _ := cli(t, nil, "runner", "--dir", e.dir, "get", id)
	if !strings.Contains(out, "running") {
		t.Errorf("get does not show it running:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(e.bin, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = waitParked(t, e.st, id)
	if s.Status != ir.Done || e.count() != "1,2,2,3" {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("%s (%s), count %s\n%s", s.Status, s.Reason, e.count(), log)
	}
	log, _ := os.ReadFile(s.LogPath)
	if !strings.Contains(string(log), "autonomy: continued by the operator (continuation 1 of at most 3): its supervising runner died; it resumes at step 2\n") ||
		!strings.Contains(string(log), "stopping what is left of the run it started") {
		t.Errorf("the log does not say it was continued:\n%s", log)
	}
	resumed := e.events(id, "resumed")
	if len(resumed) != 1 || !strings.Contains(resumed[0].Message, "resumes at step 2") || !strings.Contains(resumed[0].Message, "continuation 1 of at most 3") {
		t.Fatalf("resumed events: %+v", resumed)
	}
	if o := e.events(id, "orphaned"); len(o) != 0 {
		t.Fatalf("orphaned: %+v", o)
	}
	if _, ok, err := e.st.GetState(context.Background(), "steps:"+id); ok || err != nil {
		t.Fatalf("the checkpoint outlived the session (%v)", err)
	}
	noTempsLeft(t, e.env, e.dir, e.tmp)
}

// TestRunnerStepsResumeBounded: a session whose supervisor is killed four times is continued
// three times, then fails saying so, and the run left behind is stopped.
func TestRunnerStepsResumeBounded(t *testing.T) {
	t.Parallel()
	e := newResumeEnv(t)
	id := e.launch()
	var agent int
	for kill := 1; kill <= 4; kill++ {
		agent = e.blocked()
		e.killSupervisor(id)
		out, errOut, code := cli(t, e.env, "runner", "--dir", e.dir, "list")
		if code != 0 {
			t.Fatalf("list: %d %s", code, errOut)
		}
		if kill <= 3 != strings.Contains(out, id) {
			t.Fatalf("after kill %d, list:\n%s", kill, out)
		}
	}
	gone(t, agent, "the last run's step 2 agent")
	s, _, _ := e.st.Get(context.Background(), id)
	want := "its supervising runner died 4 times: it was continued 3 times already, the most allowed (3)"
	if s.Status != ir.Failed || !strings.Contains(s.Reason, want) || !strings.Contains(s.Reason, "at step 2") {
		t.Fatalf("%s: %q, want %q", s.Status, s.Reason, want)
	}
	if n := len(e.events(id, "resumed")); n != 3 || e.count() != "1,2,2,2,2" {
		t.Fatalf("%d resumed events, count %s", n, e.count())
	}
	out, _, _ := cli(t, nil, "runner", "--dir", e.dir, "get", id)
	if !strings.Contains(out, "failed") || !strings.Contains(out, "died 4 times") {
		t.Errorf("get:\n%s", out)
	}
	noTempsLeft(t, e.env, e.dir, e.tmp)
}

// TestRunnerStepsResumeRunKilled: the supervisor and the run's process are both SIGKILLed (a
// crash that takes the run too), leaving step 2's agent running in its own process group: the
// continuation stops that agent before it runs step 2 again, and the session is done with step 1
// run once.
func TestRunnerStepsResumeRunKilled(t *testing.T) {
	t.Parallel()
	e := newResumeEnv(t)
	id := e.launch()
	oldAgent := e.blocked()
	old := e.killSupervisor(id)
	if err := proc.Kill(old.PID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); proc.Alive(old.PID, old.PIDStart); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run outlived SIGKILL")
		}
	}
	if syscall.Kill(oldAgent, 0) != nil {
		t.Fatal("the step's agent was to outlive its run")
	}
	if _, errOut, code := cli(t, e.env, "runner", "--dir", e.dir, "get", id); code != 0 {
		t.Fatalf("get: %d %s", code, errOut)
	}
	e.blocked()
	gone(t, oldAgent, "the old run's step 2 agent")
	if err := os.WriteFile(filepath.Join(e.bin, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := waitParked(t, e.st, id)
	if s.Status != ir.Done || e.count() != "1,2,2,3" {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("%s (%s), count %s\n%s", s.Status, s.Reason, e.count(), log)
	}
	if log, _ := os.ReadFile(s.LogPath); testing.Verbose() {
		t.Logf("log:\n%s", log)
	}
	if r := e.events(id, "resumed"); len(r) != 1 || !strings.Contains(r[0].Message, "at step 2") {
		t.Fatalf("resumed events: %+v", r)
	}
	noTempsLeft(t, e.env, e.dir, e.tmp)
}

// TestRunnerStepsResumeAfterAnswer: the supervisor dies while the step after an answered @elicit
// runs (the run took the answered state, so no continuation waits any more): the continuation
// runs that step again with the answer, asking nothing, and runs no step before it again.
func TestRunnerStepsResumeAfterAnswer(t *testing.T) {
	t.Parallel()
	w := launchWriter(t, map[string]string{"1": "major", "2a": "- drops v1", "3": `{"notes": "done"}`}, "3.1")
	dir, e, env, st, id := w.dir, w.e, w.env, w.st, w.id
	s := waitParked(t, st, id)
	log, _ := os.ReadFile(s.LogPath)
	m := answerInLog.FindStringSubmatch(string(log))
	if s.Status != ir.Paused || m == nil {
		t.Fatalf("%s (%s), no token in the log:\n%s", s.Status, s.Reason, log)
	}
	slow := filepath.Join(e.dir, "slow-3")
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, env, "runner", "--dir", dir, "update", id, "--token", m[1], "--answer", "changelog"); code != 0 {
		t.Fatalf("answer: %d %s", code, errOut)
	}
	pidFile := filepath.Join(e.dir, "sleep.pid")
	var sleeper int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		raw, _ := os.ReadFile(pidFile)
		if sleeper, _ = strconv.Atoi(strings.TrimSpace(string(raw))); sleeper > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("step 3 never started (count %s)", e.count())
		}
	}
	killSupervisor(t, st, id)
	os.Remove(slow)
	if _, errOut, code := cli(t, env, "runner", "--dir", dir, "list"); code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	gone(t, sleeper, "the old run's step 3 agent's child")
	s = waitParked(t, st, id)
	if s.Status != ir.Done || e.count() != "1,2a,3,3" {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("%s (%s), count %s\n%s", s.Status, s.Reason, e.count(), log)
	}
	if p := e.prompt("3"); !strings.Contains(p, "the person answered: changelog") {
		t.Errorf("prompt 3:\n%s", p)
	}
	es, _ := st.Events(context.Background(), id, 0)
	var resumed []string
	for _, ev := range es {
		if ev.Kind == "resumed" {
			resumed = append(resumed, ev.Message)
		}
	}
	if len(resumed) != 1 || !strings.Contains(resumed[0], "resumes at step 3") {
		t.Fatalf("resumed events: %q", resumed)
	}
	noTempsLeft(t, env, dir, w.tmp)
}
