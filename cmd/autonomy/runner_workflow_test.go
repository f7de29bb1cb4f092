//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

const workflowFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  triage:
    behavior: flows/triage.yml
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`

const triageFlow = `name: triage
args:
  ITEM: { default: none }
steps:
  - id: one
    command: cli sh -c 'echo one-$0 >> count; echo "[\"a\"]"' $args.ITEM
    output: json
  - id: gate
    command: cli sh -c 'echo gate >> count'
    approval: required
    prompt: Apply the categories?
  - id: three
    command: cli sh -c 'echo three >> count'
`

// waitParked waits until session id is parked at an approval, or ended.
func waitParked(t *testing.T, st *store.Store, id string) store.Session {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, _, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status.Ended() || s.Status == ir.Paused && s.TokenHash != "" && s.PID == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %s, never parked", id, s.Status)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

var tokenInLog = regexp.MustCompile(`--token (rt_[A-Za-z0-9_-]+) --approve`)

// TestRunnerWorkflowApproval: an actor whose behavior is a workflow playbook runs it as its
// session; the approval parks the session (list shows the prompt), a wrong token is refused,
// approve continues after the gate without running step one again, and the session is done;
// a second session denied is cancelled with no later side effect, and its token is spent.
func TestRunnerWorkflowApproval(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, workflowFleet, map[string]string{"flows/triage.yml": triageFlow})
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	count := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "count"))
		return strings.Join(strings.Fields(string(b)), ",")
	}
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "triage", "--ref", "42")
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.Fields(out)[0]
	s := waitParked(t, st, id)
	if s.Status != ir.Paused || count() != "one-42" {
		t.Fatalf("session %s: %s (%s), side effects %s", id, s.Status, s.Reason, count())
	}
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "list")
	if !strings.Contains(out, "WAITING FOR") || !strings.Contains(out, "Apply the categories?") {
		t.Errorf("list does not show the prompt:\n%s", out)
	}
	log, _ := os.ReadFile(s.LogPath)
	m := tokenInLog.FindStringSubmatch(string(log))
	if m == nil {
		t.Fatalf("no token in the log:\n%s", log)
	}
	tok := m[1]
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--token", tok+"x", "--approve"); code == 0 || !strings.Contains(errOut, "token does not resume") {
		t.Errorf("wrong token: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "running"); code == 0 || !strings.Contains(errOut, "waits for an approval") {
		t.Errorf("--status running on a parked session: exit %d %s", code, errOut)
	}
	if out, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--token", tok, "--approve", "--evidence", "looked at it"); code != 0 || !strings.Contains(out, "running") {
		t.Fatalf("approve: exit %d %s %s", code, out, errOut)
	}
	s = waitParked(t, st, id)
	if s.Status != ir.Done || count() != "one-42,gate,three" {
		t.Fatalf("after approve: %s (%s), side effects %s (step one must run once)", s.Status, s.Reason, count())
	}
	if _, _, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--token", tok, "--approve"); code == 0 {
		t.Error("a used token was accepted")
	}

	os.Remove(filepath.Join(dir, "count"))
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "launch", "triage", "--ref", "7")
	id = strings.Fields(out)[0]
	s = waitParked(t, st, id)
	log, _ = os.ReadFile(s.LogPath)
	tok = tokenInLog.FindStringSubmatch(string(log))[1]
	if out, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--token", tok, "--deny"); code != 0 || !strings.Contains(out, "cancelled") {
		t.Fatalf("deny: exit %d %s %s", code, out, errOut)
	}
	time.Sleep(300 * time.Millisecond)
	if s, _, _ := st.Get(context.Background(), id); s.Status != ir.Cancelled || count() != "one-7" {
		t.Errorf("after deny: %s, side effects %s", s.Status, count())
	}
	if err := st.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestRunnerWorkflowFails: a workflow whose step fails ends its session failed, naming the step;
// one that finishes ok is done, verified by the workflow.
func TestRunnerWorkflowFails(t *testing.T) {
	yml := `schema: autonomy.ir.v1
targets: [local]
actors:
  bad:
    behavior: flows/bad.yml
    triggers: [{ dispatch: true }]
  good:
    behavior: flows/good.yml
    triggers: [{ dispatch: true }]
`
	dir := runnerFleet(t, yml, map[string]string{
		"flows/bad.yml":  "name: bad\nsteps:\n  - id: parse\n    command: cli echo not-json\n    output: json\n  - id: after\n    command: cli touch after\n",
		"flows/good.yml": "name: good\nsteps:\n  - id: hello\n    command: cli echo hello\n",
	})
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := map[string]string{"bad": `failed: the workflow failed: step "parse": declares output: json`, "good": "done: "}
	for actor, w := range want {
		out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", actor)
		if code != 0 {
			t.Fatalf("launch %s: %s", actor, errOut)
		}
		s := waitParked(t, st, strings.Fields(out)[0])
		if got := string(s.Status) + ": " + s.Reason; !strings.HasPrefix(got, w) {
			t.Errorf("%s: %s, want %s…", actor, got, w)
		}
		if actor == "good" && s.Verified != "the workflow finished ok" {
			t.Errorf("good: verified %q", s.Verified)
		}
		// runner logs says why it failed, not only which step.
		if logs, _, _ := cli(t, nil, "runner", "--dir", dir, "logs", s.ID); actor == "bad" && !strings.Contains(logs, `autonomy: the workflow failed: step "parse": declares output: json`) {
			t.Errorf("bad: runner logs does not say why the workflow failed:\n%s", logs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
		t.Error("a step after the failed one ran")
	}
}
