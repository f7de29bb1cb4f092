//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestEscapedProcessIsKilled: a session's process that leaves its process group (setsid) and
// is orphaned when the session's process exits is not left running under init: its supervisor
// (a separate process, as the CLI starts it) is its subreaper, and kills it once the session is
// over, recording an "escaped" event.
func TestEscapedProcessIsKilled(t *testing.T) {
	t.Parallel()
	script := "#!/bin/sh\nsetsid sleep 300 &\necho $! > \"$AUTONOMY_DIR/escaped.pid\"\nsleep 0.2\n" + scriptDone
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": script})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "worker")
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions := waitAllEnded(t, st, 1)
	if sessions[0].Status != "done" {
		t.Fatalf("session %+v", sessions[0])
	}
	pid := waitEscapedKilled(t, dir)
	deadline := time.Now().Add(5 * time.Second)
	for {
		events, err := st.Events(context.Background(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range events {
			found = found || e.Kind == "escaped" && strings.Contains(e.Message, strconv.Itoa(pid))
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no escaped event naming %d: %+v", pid, events)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAProcessLeftInTheGroupIsNotEscaped: a process the session left running in its own process
// group, orphaned (its parent exited first, as a sandbox's relay forked for a connection is), is
// killed with the group as the session ends, and is not reported as escaped.
func TestAProcessLeftInTheGroupIsNotEscaped(t *testing.T) {
	t.Parallel()
	script := "#!/bin/sh\nsh -c 'sleep 300 & echo $! > \"$AUTONOMY_DIR/escaped.pid\"'\nsleep 0.2\n" + scriptDone
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": script})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "worker")
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s := waitAllEnded(t, st, 1); s[0].Status != "done" {
		t.Fatalf("session %+v", s[0])
	}
	pid := waitEscapedKilled(t, dir)
	events, err := st.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == "escaped" {
			t.Fatalf("the process %d left in the session's group was reported escaped: %s", pid, e.Message)
		}
	}
}

// TestLaunchedSupervisorSurvivesItsLauncher: a session that launches another (agent:launch) has
// that session's supervisor among its descendants; when the launching session ends, its
// supervisor, the subreaper of what it started, leaves the other supervisor alone: the launched
// session, still running, ends done.
func TestLaunchedSupervisorSurvivesItsLauncher(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, seamYAML, map[string]string{
		"scripts/pm.sh":      "#!/bin/sh\nautonomy runner launch worker --ref from-pm\n" + scriptDone,
		"scripts/work.sh":    "#!/bin/sh\nuntil [ -f \"$AUTONOMY_DIR/gate\" ]; do sleep 0.05; done\n" + scriptDone,
		"humans/approver.md": "# Decide\n",
	})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "pm")
	if code != 0 {
		t.Fatalf("launch pm: %d %s", code, errOut)
	}
	pm := strings.TrimSpace(out)
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Wait until pm ended and its supervisor is gone (it killed what it would kill).
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, ok, err := st.Get(context.Background(), pm)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if s.Status.Ended() && syscall.Kill(s.SupervisorPID, 0) != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pm: %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range waitAllEnded(t, st, 2) {
		if s.Status != "done" {
			t.Errorf("%s (%s) ended %s: %s", s.ID, s.Actor, s.Status, s.Reason)
		}
	}
}

// TestEscapedProcessIsKilledBeforeTheGitGuard: a process an agent left running outside its
// group, rewriting the git directory's config over and over, is killed before the git guard
// puts the config back, so that the config stays as it was once the session is over.
func TestEscapedProcessIsKilledBeforeTheGitGuard(t *testing.T) {
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	script := `#!/bin/sh
cat >/dev/null
common=$(git rev-parse --path-format=absolute --git-common-dir)
setsid sh -c 'while :; do printf "[alias]\n\tst = !touch pwned\n" > "$1/config"; done' sh "$common" </dev/null >/dev/null 2>&1 &
echo $! > "$AUTONOMY_DIR/escaped.pid"
while ! grep -q pwned "$common/config"; do :; done
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	yml := "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  planter:\n    behavior: skills/planter\n    triggers: [{ dispatch: true }]\n" +
		"policy:\n  box:\n    local:\n      agent: [/bin/sh, " + agent + "]\n"
	dir := runnerFleet(t, yml, map[string]string{"skills/planter/SKILL.md": "# planter\n"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "install"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	config, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "planter"); code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitAllEnded(t, st, 1)
	waitEscapedKilled(t, dir)
	if now, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); !bytes.Equal(now, config) {
		t.Errorf("the escaped process rewrote the config after the guard put it back:\n%s", now)
	}
}

// waitEscapedKilled waits until the process whose pid the session wrote to escaped.pid is killed
// (it may wait to be reaped by whoever is its parent now), and returns it.
func waitEscapedKilled(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "escaped.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		t.Fatalf("escaped.pid holds %q", data)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d, which left the session's group, is still running 10 s after the session ended", pid)
		}
	}
	return pid
}
