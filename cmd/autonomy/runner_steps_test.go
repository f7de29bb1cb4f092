//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

const stepsFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  writer:
    behavior: playbooks/release.md
    triggers: [{ dispatch: true, params: { VERSION: subject.ref } }]
`

var answerInLog = regexp.MustCompile(`--token (rt_[A-Za-z0-9_-]+) --answer`)

// TestRunnerStepPlaybook: an actor whose behavior is a step playbook runs it as its session, one
// agent invocation per step (the box's agent, here a scripted stand-in): the @elicit parks it
// input-required with list showing the question, a wrong answer is refused with the token kept,
// the answer continues it without running a completed step again, and it is done with its
// artifact in its results.
func TestRunnerStepPlaybook(t *testing.T) {
	t.Parallel()
	w := launchWriter(t, map[string]string{"1": "major", "2a": "- drops v1", "3": `{"notes": "done"}`}, "3.1")
	dir, e, env, st, id := w.dir, w.e, w.env, w.st, w.id
	s := waitParked(t, st, id)
	if s.Status != ir.Paused || e.count() != "1,2a" {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("session %s: %s (%s), count %s\n%s", id, s.Status, s.Reason, e.count(), log)
	}
	out, _, _ := cli(t, nil, "runner", "--dir", dir, "list")
	if !strings.Contains(out, "Where are the notes of 3.1 published? [blog|changelog]") {
		t.Errorf("list does not show the question:\n%s", out)
	}
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "get", id)
	if !strings.Contains(out, "input-required: Where are the notes of 3.1 published? [blog|changelog]") {
		t.Errorf("get does not show the question:\n%s", out)
	}
	log, _ := os.ReadFile(s.LogPath)
	m := answerInLog.FindStringSubmatch(string(log))
	if m == nil {
		t.Fatalf("no token in the log:\n%s", log)
	}
	// The session continues under this command's environment: one a launch would be refused in
	// refuses the answer, naming why, and the token stays valid.
	bad := append(append([]string{}, env...), local.AgentEnv+"=not a list")
	if _, errOut, code := cli(t, bad, "runner", "--dir", dir, "update", id, "--token", m[1], "--answer", "changelog"); code != 1 ||
		!strings.Contains(errOut, local.AgentEnv+" must be a JSON list") || !strings.Contains(errOut, "the token is still valid") {
		t.Fatalf("an answer from an environment a launch is refused in: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, env, "runner", "--dir", dir, "update", id, "--token", m[1], "--answer", "radio"); code == 0 || !strings.Contains(errOut, `"radio" is not one of the options: blog, changelog; the token is still valid`) {
		t.Fatalf("a wrong answer: exit %d %s", code, errOut)
	}
	if out, errOut, code := cli(t, env, "runner", "--dir", dir, "update", id, "--token", m[1], "--answer", "changelog"); code != 0 || !strings.Contains(out, "running") {
		t.Fatalf("answer: exit %d %s %s", code, out, errOut)
	}
	s = waitParked(t, st, id)
	if s.Status != ir.Done || e.count() != "1,2a,3" {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("after the answer: %s (%s), count %s\n%s", s.Status, s.Reason, e.count(), log)
	}
	art := filepath.Join(dir, local.ArtifactsDir(id), "artifact.json")
	raw, err := os.ReadFile(art)
	var v map[string]string
	if err != nil || json.Unmarshal(raw, &v) != nil || v["notes"] != "done" || !strings.Contains(s.Verified, art) {
		t.Fatalf("artifact %q %v; verified %q", raw, err, s.Verified)
	}
	if p := e.prompt("3"); !strings.Contains(p, "the person answered: changelog") || !strings.Contains(p, "- drops v1") || !strings.Contains(p, "in a formal tone") {
		t.Errorf("prompt 3:\n%s", p)
	}
	if _, _, code := cli(t, env, "runner", "--dir", dir, "update", id, "--token", m[1], "--answer", "blog"); code == 0 {
		t.Error("a used token was accepted")
	}
}

// TestRunnerStepPlaybookFails: a step whose output does not fit fails the session, naming the
// step and the directive, and the run's checkpoint goes with it.
func TestRunnerStepPlaybookFails(t *testing.T) {
	w := launchWriter(t, map[string]string{"1": "maybe"}, "1")
	st, id := w.st, w.id
	s := waitParked(t, st, id)
	if s.Status != ir.Failed || !strings.Contains(s.Reason, `step 1: @output(kind): the agent answered "maybe", which is not one of major, minor`) {
		t.Fatalf("%s: %s", s.Status, s.Reason)
	}
	if _, ok, err := st.GetState(context.Background(), "steps:"+id); ok || err != nil {
		t.Fatalf("the checkpoint outlived the session (%v)", err)
	}
}

// TestRunnerStepPlaybookCancel: cancelling a step playbook session while its agent runs stops
// the agent's whole process group (its own group, apart from the session's process), and the
// session is cancelled.
func TestRunnerStepPlaybookCancel(t *testing.T) {
	w := launchWriter(t, nil, "1", "slow-1")
	dir, e, st, id := w.dir, w.e, w.st, w.id
	pidFile := filepath.Join(e.dir, "sleep.pid")
	deadline := time.Now().Add(30 * time.Second)
	var pid int
	for pid == 0 {
		raw, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
		if time.Now().After(deadline) {
			t.Fatal("the agent never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "cancel", id); code != 0 {
		t.Fatalf("cancel: %d %s", code, errOut)
	}
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's child %d outlived the cancel", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := waitParked(t, st, id); s.Status != ir.Cancelled {
		t.Fatalf("%s: %s", s.Status, s.Reason)
	}
}

// writer is a launched session of the writer actor (the release step playbook, its inputs
// renamed to launch params) with its scripted agent and the installation's store.
type writer struct {
	dir string
	e   *stepsEnv
	// env is the runner processes' environment; tmp their TMPDIR (noTempsLeft checks it).
	env []string
	tmp string
	st  *store.Store
	id  string
}

// launchWriter installs stepsFleet, scripts the agent's answers (and the markers, e.g. slow-1,
// in its directory), and launches writer with --ref ref.
func launchWriter(t *testing.T, answers map[string]string, ref string, markers ...string) writer {
	t.Helper()
	book, err := os.ReadFile("testdata/steps/release.md")
	if err != nil {
		t.Fatal(err)
	}
	// tone has no default in the test playbook: the runner passes launch params only.
	// Launch params are env names: the input is VERSION.
	src := strings.Replace(string(book), "(enum: formal, casual)", "(string: formal)", 1)
	src = strings.NewReplacer("`version`", "`VERSION`", "{{version}}", "{{VERSION}}").Replace(src)
	w := writer{dir: runnerFleet(t, stepsFleet, map[string]string{"playbooks/release.md": src}), e: newStepsEnv(t, answers)}
	for _, m := range markers {
		if err := os.WriteFile(filepath.Join(w.e.dir, m), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.tmp = t.TempDir()
	w.env = []string{local.AgentEnv + `=["` + filepath.Join(w.e.dir, "agent") + `"]`, "TMPDIR=" + w.tmp}
	if w.st, err = store.Open(local.DBPath(w.dir)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.st.Close() })
	out, errOut, code := cli(t, w.env, "runner", "--dir", w.dir, "launch", "writer", "--ref", ref)
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	w.id = strings.Fields(out)[0]
	return w
}
