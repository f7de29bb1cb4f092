//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/mcptest"
	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// cliEnv, in a process's environment, makes this test binary be autonomy itself: TestMain runs
// the command line instead of the tests. TestMain sets it for every process the tests start
// (runner supervisors are autonomy re-executing itself through os.Executable, and session
// scripts call it as autonomy, the link the runner puts first on their PATH), so no separate
// binary is built.
const cliEnv = "GO_TEST_AUTONOMY_CLI"

// TestMain runs the command line when this binary was started as autonomy, and the tests
// otherwise.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == mcptest.Flag {
		os.Exit(mcptest.Serve(os.Args[2:])) // an MCP server a workflow's mcp step calls
	}
	// A session's environment is an allowlist (docs/local.md), which cliEnv is not in: a session
	// that runs autonomy (the link on its PATH, a workflow's run) starts this binary with
	// autonomy's arguments, never the test flags go test passes.
	if os.Getenv(cliEnv) == "1" || len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Setenv(cliEnv, "1")
	os.Exit(m.Run())
}

// autonomyBin is the path of the autonomy binary the tests run as a separate process: this test
// binary, which TestMain turns into autonomy in the processes it starts.
func autonomyBin(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// scriptDone is the line a test's shell script ends with to deliver a valid result of the
// default contract (autonomy.result.v1): a script's session is done only with one.
const scriptDone = `printf '{"status":"done","summary":"ok"}\n' > "$AUTONOMY_RESULT"` + "\n"

// runnerFleet writes a profile and installs it with the binary; it returns the installation.
func runnerFleet(t *testing.T, yml string, files map[string]string) string {
	t.Helper()
	prof := filepath.Join(t.TempDir(), "profile")
	files["ir.yml"] = yml
	for name, content := range files {
		full := filepath.Join(prof, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "install")
	if out, err := exec.Command(autonomyBin(t), "compile", prof, "--target", "local", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	return dir
}

// cli runs the binary and returns stdout, stderr and the exit code.
func cli(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(autonomyBin(t), args...)
	// The tests' stand-in agent CLIs reach no model: they run without its key (a test of the
	// refusal passes AUTONOMY_AGENT_LOGIN= itself).
	cmd.Env = append(append(os.Environ(), "AUTONOMY_AGENT_LOGIN=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// waitAllEnded waits until every session of the installation has ended.
func waitAllEnded(t *testing.T, st *store.Store, want int) []store.Session {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		all, err := st.List(context.Background(), store.ListOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		ended := 0
		for _, s := range all {
			if s.Status.Ended() {
				ended++
			}
		}
		if ended == len(all) && len(all) >= want {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sessions ended", ended, len(all))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const trivialFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  worker:
    behavior: scripts/work.sh
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`

// TestRunnerConcurrentLaunches: 8 processes at a time launch 25 sessions each into one
// installation; exactly 200 sessions result, with 200 distinct ids, and the store stays whole.
func TestRunnerConcurrentLaunches(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": "#!/bin/sh\n" + scriptDone})
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "worker", "--ref", fmt.Sprintf("%d-%d", p, i))
				if code != 0 || strings.TrimSpace(out) == "" {
					errs <- fmt.Sprintf("launch %d-%d: exit %d: %s", p, i, code, errOut)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all := waitAllEnded(t, st, 200)
	ids, refs := map[string]bool{}, map[string]bool{}
	for _, s := range all {
		ids[s.ID] = true
		refs[s.Params["ITEM"]] = true
		if s.Status != "done" {
			t.Errorf("session %s: %s %s", s.ID, s.Status, s.Reason)
		}
	}
	if len(all) != 200 || len(ids) != 200 || len(refs) != 200 {
		t.Fatalf("%d sessions, %d distinct ids, %d distinct refs; want 200 each", len(all), len(ids), len(refs))
	}
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerCrashMidStorm kills launching processes and supervisors with SIGKILL while a storm
// of launches runs, then reopens the store and finds it consistent; reconciliation then fails
// the sessions whose supervisor died, so none stays running forever.
func TestRunnerCrashMidStorm(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": "#!/bin/sh\nsleep 0.3\n"})
	bin := autonomyBin(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cmd := exec.Command(bin, "runner", "--dir", dir, "launch", "worker")
				_ = cmd.Start()
				// Kill about one launcher in three mid-launch.
				if time.Now().UnixNano()%3 == 0 {
					time.Sleep(time.Duration(time.Now().UnixNano()%8) * time.Millisecond)
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
				_ = cmd.Wait()
			}
		}()
	}
	// Kill supervisors too, found by their command line.
	deadline := time.Now().Add(3 * time.Second)
	killed := 0
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !bytes.Contains(cmdline, []byte("supervise")) || !bytes.Contains(cmdline, []byte(dir)) {
				continue
			}
			var pid int
			fmt.Sscan(e.Name(), &pid)
			if pid > 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatalf("the store does not open after the crashes: %v", err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Fatalf("inconsistent after SIGKILLs: %v", err)
	}
	all, _ := st.List(context.Background(), store.ListOptions{All: true})
	if len(all) == 0 || killed == 0 {
		t.Fatalf("the storm did not happen: %d sessions, %d supervisors killed", len(all), killed)
	}
	// Wait for the orphaned processes to end (a session started by the last launches has a live
	// supervisor and ends by itself; under load that takes longer than its 0.3 s), then
	// reconcile through list.
	var listed struct{ Sessions []local.SessionView }
	for wait := time.Now().Add(10 * time.Second); ; {
		time.Sleep(500 * time.Millisecond)
		out, errOut, code := cli(t, nil, "runner", "--dir", dir, "list", "--format", "json")
		if code != 0 {
			t.Fatalf("list: %d %s", code, errOut)
		}
		listed.Sessions = nil
		if err := json.Unmarshal([]byte(out), &listed); err != nil {
			t.Fatal(err)
		}
		inFlight := false
		for _, s := range listed.Sessions {
			inFlight = inFlight || s.PID != 0 || s.Started != ""
		}
		if !inFlight || time.Now().After(wait) {
			break
		}
	}
	for _, s := range listed.Sessions {
		if s.PID != 0 || s.Started != "" {
			t.Errorf("session %s is still in flight after its supervisor was killed: %+v", s.ID, s)
		}
	}
	t.Logf("%d sessions, %d supervisors killed, %d left awaiting a supervisor that never started", len(all), killed, len(listed.Sessions))
}

const seamYAML = `schema: autonomy.ir.v1
targets: [local]
actors:
  pm:
    behavior: scripts/pm.sh
    capabilities: [agent:launch@worker]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/work.sh
    triggers: [{ dispatch: true, params: { ITEM: subject.ref, FROM: subject.actor } }]
  approver:
    kind: human
    behavior: humans/approver.md
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`

// TestRunnerFromInsideASession: an agent's own runner calls are authorized against its
// capabilities: pm may launch worker, not approver, and the denial exits 1.
func TestRunnerFromInsideASession(t *testing.T) {
	dir := runnerFleet(t, seamYAML, map[string]string{
		"scripts/pm.sh": `#!/bin/sh
autonomy runner launch worker --ref from-pm > "$AUTONOMY_DIR/pm-worker.out" 2>&1
echo "worker=$?" >> "$AUTONOMY_DIR/pm.codes"
autonomy runner launch approver > "$AUTONOMY_DIR/pm-approver.out" 2>&1
echo "approver=$?" >> "$AUTONOMY_DIR/pm.codes"
autonomy runner list > "$AUTONOMY_DIR/pm-list.out" 2>&1
echo "list=$?" >> "$AUTONOMY_DIR/pm.codes"
`,
		"scripts/work.sh":    "#!/bin/sh\n" + scriptDone,
		"humans/approver.md": "# Decide\n",
	})
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "pm")
	if code != 0 {
		t.Fatalf("launch pm: %d %s", code, errOut)
	}
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitAllEnded(t, st, 2)
	codes, _ := os.ReadFile(filepath.Join(dir, "pm.codes"))
	if string(codes) != "worker=0\napprover=1\nlist=1\n" {
		t.Fatalf("exit codes from inside pm's session:\n%s", codes)
	}
	denied, _ := os.ReadFile(filepath.Join(dir, "pm-approver.out"))
	if !strings.Contains(string(denied), "denied") || !strings.Contains(string(denied), "agent:launch") {
		t.Errorf("denial message: %s", denied)
	}
	all, _ := st.List(context.Background(), store.ListOptions{All: true})
	var worker *store.Session
	for i := range all {
		if all[i].Actor == "worker" {
			worker = &all[i]
		}
	}
	if worker == nil || worker.Origin != "session:"+strings.TrimSpace(out) || worker.Params["FROM"] != "pm" || worker.Params["ITEM"] != "from-pm" {
		t.Fatalf("worker launched from pm: %+v", worker)
	}
}

func TestRunnerHumanCLI(t *testing.T) {
	dir := runnerFleet(t, seamYAML, map[string]string{"scripts/pm.sh": "#!/bin/sh\n", "scripts/work.sh": "#!/bin/sh\n", "humans/approver.md": "# Decide\n"})
	out, _, code := cli(t, nil, "runner", "--dir", dir, "launch", "approver", "--ref", "12")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], "atk_") {
		t.Fatalf("launch approver: %d %q", code, out)
	}
	id, token := lines[0], lines[1]
	// --new-token is for the code flow's asks only, and takes no other flag.
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--new-token"); code != 1 || !strings.Contains(errOut, "not an ask of the code flow") {
		t.Errorf("a new token for an ask the operator launched: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--new-token", "--status", "done"); code != 2 {
		t.Errorf("--new-token with --status: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "done", "--evidence", "ok"); code != 1 || !strings.Contains(errOut, "token") {
		t.Errorf("update without token: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "done", "--token", token); code != 1 || !strings.Contains(errOut, "evidence") {
		t.Errorf("update without evidence: %d %s", code, errOut)
	}
	if out, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "done", "--token", token, "--evidence", "approved in #12"); code != 0 || out != id+" done\n" {
		t.Fatalf("redeem: %d %q %s", code, out, errOut)
	}
	out, _, code = cli(t, nil, "runner", "--dir", dir, "get", id, "--format", "json")
	var v local.SessionView
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Status != "done" || v.Evidence != "approved in #12" || strings.Contains(out, token) {
		t.Fatalf("get: %d %s", code, out)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "get", "999-zzzz"); code != 1 || !strings.Contains(errOut, "no session") {
		t.Errorf("get unknown: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "update", id, "--status", "bogus"); code != 2 {
		t.Errorf("bad status: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", t.TempDir(), "list"); code != 2 || !strings.Contains(errOut, "no local installation") {
		t.Errorf("list in an empty dir: %d %s", code, errOut)
	}
}

func TestRunnerServeStopsOnSignal(t *testing.T) {
	// One cron trigger, which never comes due during the test: serve says "1 scheduled trigger".
	fleet := strings.Replace(trivialFleet, "triggers: [{ dispatch: true,", `triggers: [{ cron: "0 0 1 1 *" }, { dispatch: true,`, 1)
	dir := runnerFleet(t, fleet, map[string]string{"scripts/work.sh": "#!/bin/sh\n"})
	cmd := exec.Command(autonomyBin(t), "runner", "--dir", dir, "serve")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() || !strings.Contains(sc.Text(), "serving") || !strings.Contains(sc.Text(), "(1 scheduled trigger, timezone ") {
		t.Fatalf("serve said %q", sc.Text())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v: %s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "stopped") {
		t.Errorf("serve said %q at SIGTERM", rest.String())
	}
}

// A session's text (a ref, a reason quoting the agent) reaches the terminal with its control
// characters escaped: no escape sequence, and one line per session in list.
func TestRunnerOutputEscapesControlCharacters(t *testing.T) {
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": "#!/bin/sh\n" + scriptDone})
	ref := "42\x1b[2J\x1b]0;owned\x07\nFAKE  worker  agent  done"
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "worker", "--ref", ref)
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	list, _, _ := cli(t, nil, "runner", "--dir", dir, "list", "--all")
	get, _, _ := cli(t, nil, "runner", "--dir", dir, "get", id)
	for name, out := range map[string]string{"list": list, "get": get} {
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `42\x1b[2J`) {
			t.Errorf("%s printed the ref's control characters:\n%q", name, out)
		}
	}
	if n := strings.Count(list, "\n"); n != 2 {
		t.Errorf("list has %d lines for one session:\n%s", n, list)
	}
	// The session's supervisor must be done writing in the installation before the temporary
	// directory is removed (a cleanup failure was seen under load).
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := waitParked(t, st, id)
	for deadline := time.Now().Add(10 * time.Second); proc.Alive(s.SupervisorPID, s.SupervisorStart) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}
