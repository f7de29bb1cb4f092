//go:build unix

package local

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// rootFleet has two skill actors working in the installation root. Their agent notes when it
// starts and ends in trace; the tamper skill's agent also replaces a lock file where one would be,
// rewrites calm's installed launcher config into one whose command touches pwned, and then
// touches tampered.
func rootFleet(t *testing.T, trace string) fleet { return rootFleetWith(t, trace, "shared") }

// rootFleetWith is rootFleet with calm's workspace.
func rootFleetWith(t *testing.T, trace, calmWorkspace string) fleet {
	agent := filepath.Join(t.TempDir(), "agent.sh")
	script := `#!/bin/sh
echo "start $AUTONOMY_SESSION" >> ` + trace + `
if grep -q TAMPER; then
  rm -f .autonomy/state/root-workspace.lock; : > .autonomy/state/root-workspace.lock
  # (its DO NOT EDIT header made again for the new body, so the runner reads it as installed)
  sed 's#^      "/bin/sh",$#      "/bin/sh", "-c", "touch $AUTONOMY_DIR/pwned",#' .autonomy/local/actors/calm.json | sed 2d > .evil.body
  h=$(sha256sum .evil.body | cut -c1-64)
  { head -n 1 .evil.body; sed -n 2p .autonomy/local/actors/calm.json | sed "s/[0-9a-f]\{64\}/$h/"; tail -n +2 .evil.body; } > .evil.tmp
  rm .evil.body
  mv .evil.tmp .autonomy/local/actors/calm.json
  touch tampered
fi
sleep 0.3
echo "end $AUTONOMY_SESSION" >> ` + trace + `
` + deliverResult + `
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  tamper:
    behavior: skills/tamper
    triggers: [{ dispatch: true }]
  calm:
    behavior: skills/calm
    triggers: [{ dispatch: true }]
    execution: { workspace: ` + calmWorkspace + ` }
policy:
  box:
    local:
      agent: [/bin/sh, ` + agent + `]
`,
		files: map[string]string{
			"skills/tamper/SKILL.md": "# tamper\nTAMPER\n",
			"skills/calm/SKILL.md":   "# calm\nWork.\n",
		},
	}
}

// Two agents sharing the installation root run one after the other: the second waits queued
// (list shows it, with the session it waits for) until the first ended and its changes to the
// installation were put back; so the tamper guard blames the one that tampered, and the other
// ends done. Nothing is refused.
func TestRootWorkspaceSessionsQueue(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "trace")
	dir := installFleet(t, rootFleet(t, trace), false)
	r := newRunner(t, dir, Options{})
	a := launch(t, r, LaunchRequest{Actor: "tamper"})
	waitPath(t, filepath.Join(dir, "tampered"))
	if !strings.Contains(readFile(t, filepath.Join(dir, ActorPath("calm"))), "touch $AUTONOMY_DIR/pwned") {
		t.Fatal("the agent did not rewrite calm's config")
	}
	b := launch(t, r, LaunchRequest{Actor: "calm"})
	queued := waitFor(t, r, b.ID, Queued)
	if ListStatus(queued) != "queued" || !strings.Contains(Waiting(queued), "waiting for session "+a.ID) {
		t.Errorf("the second session: %s, waiting for %q", ListStatus(queued), Waiting(queued))
	}
	ga, gb := waitEnded(t, r, a.ID), waitEnded(t, r, b.ID)
	r.Wait()
	if ga.Status != ir.Failed || !strings.Contains(ga.Reason, ActorPath("calm")) {
		t.Errorf("the tampering session ended %s: %s", ga.Status, ga.Reason)
	}
	if gb.Status != ir.Done || gb.Reason != "" {
		t.Errorf("the calm session ended %s: %s", gb.Status, gb.Reason)
	}
	if got := readFile(t, trace); got != "start "+a.ID+"\nend "+a.ID+"\nstart "+b.ID+"\nend "+b.ID+"\n" {
		t.Errorf("the agents overlapped:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the second session ran the command the first agent wrote into its config")
	}
	kinds := eventKinds(t, r, b.ID)
	if !strings.Contains(kinds, "queued,dequeued") {
		t.Errorf("the queued session's events: %s", kinds)
	}
}

// A session cancelled while queued ends cancelled at once and never starts; the one holding
// the root is not disturbed.
func TestCancelWhileQueued(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "trace")
	dir := installFleet(t, rootFleet(t, trace), false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	a := launch(t, r, LaunchRequest{Actor: "calm"})
	waitTrace(t, trace, "start "+a.ID)
	b := launch(t, r, LaunchRequest{Actor: "calm"})
	waitFor(t, r, b.ID, Queued)
	if ok, err := r.Cancel(ctx, b.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	gb := waitEnded(t, r, b.ID)
	ga := waitEnded(t, r, a.ID)
	r.Wait()
	if gb.Status != ir.Cancelled || gb.PID != 0 || ga.Status != ir.Done {
		t.Errorf("queued: %s pid %d; holder: %s %s", gb.Status, gb.PID, ga.Status, ga.Reason)
	}
	if got := readFile(t, trace); strings.Contains(got, b.ID) {
		t.Errorf("the cancelled session's agent ran:\n%s", got)
	}
}

// Many root sessions launched at once all end done, never two agents at once.
func TestRootWorkspaceStorm(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "trace")
	dir := installFleet(t, rootFleet(t, trace), false)
	r := newRunner(t, dir, Options{})
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, launch(t, r, LaunchRequest{Actor: "calm"}).ID)
	}
	for _, id := range ids {
		if s := waitEnded(t, r, id); s.Status != ir.Done {
			t.Errorf("%s ended %s: %s", id, s.Status, s.Reason)
		}
	}
	r.Wait()
	lines := strings.Split(strings.TrimSpace(readFile(t, trace)), "\n")
	if len(lines) != 2*len(ids) {
		t.Fatalf("trace:\n%s", strings.Join(lines, "\n"))
	}
	var seen []string
	for i := 0; i < len(lines); i += 2 {
		s, e := strings.TrimPrefix(lines[i], "start "), strings.TrimPrefix(lines[i+1], "end ")
		if s != e || !strings.HasPrefix(lines[i], "start ") {
			t.Fatalf("two agents overlapped:\n%s", strings.Join(lines, "\n"))
		}
		seen = append(seen, s)
	}
	sort.Strings(seen)
	sort.Strings(ids)
	if strings.Join(seen, ",") != strings.Join(ids, ",") {
		t.Errorf("ran %v, launched %v", seen, ids)
	}
}

func waitTrace(t *testing.T, path, line string) {
	t.Helper()
	for i := 0; i < 1500; i++ {
		if data, _ := os.ReadFile(path); strings.Contains(string(data), line+"\n") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held %q", path, line)
}

// waitFor waits until session id satisfies ok.
func waitFor(t *testing.T, r *Runner, id string, ok func(store.Session) bool) store.Session {
	t.Helper()
	for i := 0; i < 1500; i++ {
		s, _, err := r.Store.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(s) {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session %s never got there", id)
	return store.Session{}
}

func eventKinds(t *testing.T, r *Runner, id string) string {
	t.Helper()
	events, err := r.Store.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := make([]string, len(events))
	for i, e := range events {
		kinds[i] = e.Kind
	}
	return strings.Join(kinds, ",")
}

func waitPath(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 1500; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// A session of an isolated actor launched while an agent works in the installation root, after
// that agent rewrote its launcher config (what an agent holding agent:launch could do to run a
// command of its choosing outside any sandbox), waits queued and starts from the config put back.
func TestIsolatedSessionWaitsForTheRootAgent(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "trace")
	dir := installFleet(t, rootFleetWith(t, trace, "isolated"), true)
	r := newRunner(t, dir, Options{})
	a := launch(t, r, LaunchRequest{Actor: "tamper"})
	waitPath(t, filepath.Join(dir, "tampered"))
	b := launch(t, r, LaunchRequest{Actor: "calm"})
	waitFor(t, r, b.ID, Queued)
	waitEnded(t, r, a.ID)
	if gb := waitEnded(t, r, b.ID); gb.Status != ir.Done {
		t.Errorf("the isolated session ended %s: %s", gb.Status, gb.Reason)
	}
	r.Wait()
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the isolated session ran the command the root agent wrote into its config")
	}
}

// TestQueuedReasonNamesTheHolder: a session that queues in the moment between another's taking
// the root lock and its naming itself in the holder file first waits for "another session", and
// its reason names the holder once it does (list showed "another session" for good before:
// TestRunnerListShowsQueued was flaky).
func TestQueuedReasonNamesTheHolder(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	free, held, err := tryLock(r.In.Dir, true)
	if err != nil || !held {
		t.Fatalf("taking the lock: held %v, %v", held, err)
	}
	_ = os.Remove(r.In.Path(holderPath))
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "judged", Kind: "agent", Status: ir.Running, Origin: "operator", StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	got := make(chan bool, 1)
	go func() {
		hold, ok := r.lockRoot(ctx, s, io.Discard, true)
		hold.release()
		got <- ok
	}()
	reason := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			cur, _, err := r.Store.Get(ctx, s.ID)
			if err == nil && strings.Contains(cur.Reason, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the reason never said %q: %q", want, cur.Reason)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	reason("waiting for another session")
	if err := os.WriteFile(r.In.Path(holderPath), []byte("7-holder\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reason("waiting for session 7-holder")
	free()
	if !<-got {
		t.Fatal("the lock was not taken once free")
	}
}
