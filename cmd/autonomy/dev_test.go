//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
)

// lockedBuffer is a bytes.Buffer a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// devModel is an `autonomy dev model` process.
type devModel struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	// openAI and anthropic are the base URLs it printed.
	openAI, anthropic string
}

// startDevModel starts `autonomy dev model args…` in dir as its own process and waits for the
// base URLs it prints; the test's cleanup kills it if the test did not stop it.
func startDevModel(t *testing.T, dir string, args ...string) *devModel {
	t.Helper()
	cmd := exec.Command(autonomyBin(t), append([]string{"dev", "model"}, args...)...)
	cmd.Dir = dir
	d := &devModel{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "OPENAI_BASE_URL":
			d.openAI = v
		case "ANTHROPIC_BASE_URL":
			d.anthropic = v
		}
		if d.openAI != "" && d.anthropic != "" {
			break
		}
	}
	if d.openAI == "" || d.anthropic == "" {
		_ = cmd.Wait()
		t.Fatalf("dev model printed no base URLs (exit %v):\n%s", cmd.ProcessState, d.stderr)
	}
	go func() { _, _ = bufio.NewReader(stdout).WriteTo(&bytes.Buffer{}) }() // drain
	return d
}

// stop interrupts the process as Ctrl-C would and returns its exit code.
func (d *devModel) stop(t *testing.T) int {
	t.Helper()
	return d.stopWith(t, os.Interrupt)
}

// stopWith is stop with sig.
func (d *devModel) stopWith(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := d.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// TestDevModelPlaysAScriptToTheRealCLI: `autonomy dev model` serves a script file to the pinned
// codex, which runs the scripted command and ends with the scripted answer; Ctrl-C stops it
// with exit 0.
func TestDevModelPlaysAScriptToTheRealCLI(t *testing.T) {
	codex := agentclitest.Require(t, "codex")
	dir := t.TempDir()
	proof := filepath.Join(dir, "proof.txt")
	script := "- shell: echo scripted > '" + proof + "'\n- text: Wrote the proof.\n"
	if err := os.WriteFile(filepath.Join(dir, "trial.yml"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDevModel(t, dir, "--script", "trial.yml", "--addr", "127.0.0.1:0")
	home := t.TempDir()
	out, err := agentclitest.Run(t, []string{"HOME=" + home, "CODEX_HOME=" + home, "MODELFAKE_API_KEY=trial"}, "Write the proof.",
		codex, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config",
		"--sandbox", "danger-full-access", "-m", "gpt-5.5",
		"-c", "model_provider=modelfake",
		"-c", `model_providers.modelfake.name="modelfake"`,
		"-c", `model_providers.modelfake.base_url="`+d.openAI+`"`,
		"-c", `model_providers.modelfake.wire_api="responses"`,
		"-c", `model_providers.modelfake.env_key="MODELFAKE_API_KEY"`, "-")
	if err != nil || !strings.Contains(out, "Wrote the proof.") {
		t.Fatalf("codex: %v\n%s\ndev model:\n%s", err, out, d.stderr)
	}
	if data, err := os.ReadFile(proof); err != nil || string(data) != "scripted\n" {
		t.Errorf("proof.txt = %q, %v", data, err)
	}
	if code := d.stop(t); code != 0 {
		t.Errorf("dev model exited %d after Ctrl-C:\n%s", code, d.stderr)
	}
	for _, want := range []string{"serving trial.yml (2 turns)", "played turn 1", "played turn 2", "stopped"} {
		if !strings.Contains(d.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, d.stderr)
		}
	}
}

// TestDevModelBrokenScriptExits1: a session that runs the script out is printed as it happens
// and makes the exit code 1.
func TestDevModelBrokenScriptExits1(t *testing.T) {
	dir := t.TempDir()
	d := startDevModel(t, dir, "--addr", "127.0.0.1:0")
	// A conversation that already made a shell call: the one-answer script has no turn for it.
	body := `{"model":"m","input":[{"type":"function_call","name":"exec_command","call_id":"c1","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c1","output":"x"}],"tools":[{"type":"function","name":"exec_command"}]}`
	resp, err := http.Post(d.openAI+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a conversation past the script got HTTP %d, want 400", resp.StatusCode)
	}
	if code := d.stop(t); code != 1 || !strings.Contains(d.stderr.String(), "a session broke the script") {
		t.Errorf("exit %d, want 1:\n%s", code, d.stderr)
	}
}

func TestDevModelRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yml"), []byte("- shell: ls\n  text: Done.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, _, errOut := run(t, "dev", "model", "--script", "bad.yml", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errOut, "bad.yml:1:3: turn 1 sets 2 of shell, text, json, tool") {
		t.Errorf("bad script: exit %d\n%s", code, errOut)
	}
	code, _, errOut = run(t, "dev", "model", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errOut, "not a loopback address") {
		t.Errorf("non-loopback address: exit %d\n%s", code, errOut)
	}
	code, _, errOut = run(t, "dev", "model", "--script", "missing.yml")
	if code != 2 || !strings.Contains(errOut, "missing.yml") {
		t.Errorf("missing script: exit %d\n%s", code, errOut)
	}
	// A port taken (a second dev model on the default one): the fix is named.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errOut = run(t, "dev", "model", "--addr", ln.Addr().String())
	if code != 2 || !strings.Contains(errOut, "address already in use") || !strings.Contains(errOut, "--addr 127.0.0.1:0 picks a free port") {
		t.Errorf("a port taken: exit %d\n%s", code, errOut)
	}
}

// devModelExample runs a `dev model` example of --help until it serves, on a free port (the
// example's fixed one may be taken on a shared machine), with the script it names, then stops it
// with Ctrl-C: it must exit 0.
func devModelExample(t *testing.T, ex example) {
	t.Helper()
	args := append([]string(nil), ex.args[2:]...)
	for i := range args {
		if i > 0 && args[i-1] == "--addr" {
			args[i] = "127.0.0.1:0"
		}
	}
	if script := flagValue(ex.args, "--script"); script != "" {
		if err := os.WriteFile(script, []byte("- shell: echo hello > hello.txt\n- text: Wrote hello.txt.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	d := startDevModel(t, wd, args...)
	envFile := flagValue(ex.args, "--env-file")
	if envFile != "" {
		checkEnvFile(t, filepath.Join(wd, envFile), d)
	}
	if code := d.stop(t); code != 0 {
		t.Errorf("exit %d after Ctrl-C:\n%s", code, d.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, envFile)); envFile != "" && !os.IsNotExist(err) {
		t.Errorf("--env-file %s is still there after Ctrl-C: %v", envFile, err)
	}
}

// checkEnvFile checks that the --env-file of d has the two lines d printed, once it printed them.
func checkEnvFile(t *testing.T, path string, d *devModel) {
	t.Helper()
	data, err := os.ReadFile(path)
	want := "OPENAI_BASE_URL=" + d.openAI + "\nANTHROPIC_BASE_URL=" + d.anthropic + "\n"
	if err != nil || string(data) != want {
		t.Errorf("--env-file %s: %q, %v; want %q", path, data, err, want)
	}
}

// TestDevModelEnvFile: with --addr 127.0.0.1:0 and --env-file, dev model serves on a free port
// even when the default one is taken, the file holds the printed lines by the time they are
// printed, and it is removed on Ctrl-C; a file it cannot write is a usage error.
func TestDevModelEnvFile(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.1:4000"); err == nil {
		defer l.Close() // the default port taken, as on a shared machine
	}
	dir := t.TempDir()
	d := startDevModel(t, dir, "--addr", "127.0.0.1:0", "--env-file", "model.env")
	if strings.HasSuffix(d.anthropic, ":4000") || strings.HasSuffix(d.anthropic, ":0") {
		t.Errorf("base URL %s: not a free port", d.anthropic)
	}
	checkEnvFile(t, filepath.Join(dir, "model.env"), d)
	if code := d.stop(t); code != 0 {
		t.Errorf("exit %d after Ctrl-C:\n%s", code, d.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.env")); !os.IsNotExist(err) {
		t.Errorf("model.env is still there after Ctrl-C: %v", err)
	}
	if code, _, errOut := run(t, "dev", "model", "--addr", "127.0.0.1:0", "--env-file", filepath.Join(dir, "no", "model.env")); code != 2 || !strings.Contains(errOut, "--env-file") {
		t.Errorf("an env file in a missing directory: exit %d\n%s", code, errOut)
	}

	// A second dev model given the file of one serving is refused, and leaves it; its terminal
	// closed (SIGHUP), the first removes it.
	first := startDevModel(t, dir, "--addr", "127.0.0.1:0", "--env-file", "model.env")
	code, _, errOut := run(t, "dev", "model", "--addr", "127.0.0.1:0", "--env-file", filepath.Join(dir, "model.env"))
	if code != 2 || !strings.Contains(errOut, "names a model serving at "+strings.TrimPrefix(first.anthropic, "http://")) {
		t.Errorf("a second dev model on the same env file: exit %d\n%s", code, errOut)
	}
	checkEnvFile(t, filepath.Join(dir, "model.env"), first)
	if code := first.stopWith(t, syscall.SIGHUP); code != 0 {
		t.Errorf("exit %d after SIGHUP:\n%s", code, first.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.env")); !os.IsNotExist(err) {
		t.Errorf("model.env is still there after SIGHUP: %v", err)
	}

	// A file left by one killed (SIGKILL removes nothing) names no server: replaced.
	killed := startDevModel(t, dir, "--addr", "127.0.0.1:0", "--env-file", "model.env")
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.cmd.Wait()
	next := startDevModel(t, dir, "--addr", "127.0.0.1:0", "--env-file", "model.env")
	checkEnvFile(t, filepath.Join(dir, "model.env"), next)
	if code := next.stop(t); code != 0 {
		t.Errorf("exit %d after Ctrl-C:\n%s", code, next.stderr)
	}

	// A file of the user's (a .env with a key in it) is neither replaced nor removed.
	mine := "OPENAI_BASE_URL=https://api.openai.com/v1\nOPENAI_API_KEY=sk-mine\nDB_PASSWORD=secret\n"
	for _, content := range []string{mine, "OPENAI_BASE_URL=http://127.0.0.1:9/v1\nANTHROPIC_BASE_URL=http://example.com:9\n"} {
		if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errOut = run(t, "dev", "model", "--addr", "127.0.0.1:0", "--env-file", filepath.Join(dir, ".env"))
		if data, _ := os.ReadFile(filepath.Join(dir, ".env")); code != 2 || !strings.Contains(errOut, "is not an env file of autonomy dev model") || string(data) != content {
			t.Errorf("a file of the user's: exit %d\n%s\nnow %q", code, errOut, data)
		}
	}
}
