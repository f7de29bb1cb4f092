//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

const codexFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  develop:
    behavior: skills/develop
    triggers: [{ dispatch: true, params: { ISSUE: subject.ref } }, { cron: "0 * * * *" }]
`

// Launching a skill whose agent CLI is absent exits 1 with the install hint, on one line, and
// records nothing; doctor says the same and what else to fix.
func TestMissingAgentCLI(t *testing.T) {
	dir := runnerFleet(t, codexFleet, map[string]string{"skills/develop/SKILL.md": "# develop\n"})
	empty, noCache := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + empty, "OPENAI_API_KEY=", "AUTONOMY_AGENT_CACHE=" + noCache, "AUTONOMY_AGENT_LOGIN="}
	hint := "npm install --global @openai/codex@0.169.0"
	for _, args := range [][]string{
		{"runner", "--dir", dir, "launch", "develop", "--ref", "1"},
		{"runner", "--dir", dir, "tick"},
	} {
		out, errOut, code := cli(t, env, args...)
		want := 1
		if args[3] == "tick" {
			// The first tick: nothing is due, so what cannot start is a warning (exit 0), said
			// as the refusal is; a tick that defers it exits 1 (TestATickThatCannotStartOneActorDoesTheRest).
			want = 0
			if strings.HasSuffix(out, " first tick: the schedule starts now\n") {
				out = ""
			}
		}
		if code != want || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "agent preset codex needs @openai/codex@0.169.0") || !strings.Contains(errOut, hint) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args[3:], code, out, errOut)
		}
	}
	out, _, code := cli(t, env, "runner", "--dir", dir, "list", "--all")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("sessions were recorded:\n%s", out)
	}

	out, _, code = cli(t, env, "doctor", dir)
	if runtime.GOOS == "linux" && !strings.Contains(out, "fix  network sandbox socat: socat is not on PATH: install socat (e.g. apt-get install bubblewrap socat)") {
		t.Errorf("doctor does not ask for the network sandbox's socat:\n%s", out)
	}
	if code != 1 || !strings.Contains(out, "fix  agent codex: codex is not on PATH (runs develop): make agent-install (from a clone of autonomy: into "+noCache+"), or "+hint) ||
		!strings.Contains(out, "fix  credential OPENAI_API_KEY: not set: launches are refused") || !strings.Contains(out, "AUTONOMY_AGENT_LOGIN=1 to run codex with its own login") || !strings.Contains(out, "ok   installation: ") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	// With a codex of the pinned version and the credential, doctor is content.
	bin := t.TempDir()
	for name, script := range map[string]string{"codex": "#!/bin/sh\necho codex-cli 0.169.0\n", "git": "#!/bin/sh\n", "bwrap": "#!/bin/sh\n", "socat": "#!/bin/sh\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code = cli(t, []string{"PATH=" + bin, "OPENAI_API_KEY=k", "AUTONOMY_AGENT_CACHE=" + noCache}, "doctor", dir)
	if code != 0 || strings.Contains(out, "fix") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	// The wrong version is named.
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho codex-cli 0.100.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, code = cli(t, []string{"PATH=" + bin, "OPENAI_API_KEY=k", "AUTONOMY_AGENT_CACHE=" + noCache}, "doctor", dir)
	if code != 1 || !strings.Contains(out, "is version 0.100.0, the installation is pinned to 0.169.0 (runs develop): ") || !strings.Contains(out, hint) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	if out, errOut, code := cli(t, nil, "doctor", filepath.Join(dir, "nowhere")); code != 1 || !strings.Contains(out, "fix  installation: none in ") || !strings.Contains(errOut, "1 thing to fix before sessions can run") {
		t.Errorf("doctor of nothing: exit %d\n%s%s", code, out, errOut)
	}
}

// doctor names the model proxy, never a key written into its URL.
func TestDoctorHidesProxyCredentials(t *testing.T) {
	dir := runnerFleet(t, codexFleet, map[string]string{"skills/develop/SKILL.md": "# develop\n"})
	for _, u := range []string{"https://bob:s3cret-key@proxy.example.com/v1", "https://s3cret-key@proxy.example.com/v1", "http://[::1%s3cret-key"} {
		out, _, _ := cli(t, []string{"PATH=" + t.TempDir(), "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + u}, "doctor", dir)
		if strings.Contains(out, "s3cret-key") || !strings.Contains(out, "credential OPENAI_API_KEY: set") {
			t.Errorf("doctor with %s:\n%s", u, out)
		}
	}
}

// doctor finds the agent CLI where make agent-install put it (the agent cache), says that the
// runner provides autonomy to its sessions, and checks gh when the repository is on GitHub.
func TestDoctorReadsTheAgentCacheAndChecksGh(t *testing.T) {
	dir := runnerFleet(t, codexFleet, map[string]string{"skills/develop/SKILL.md": "# develop\n"})
	cache, bin := t.TempDir(), t.TempDir()
	cached := filepath.Join(cache, "codex-0.169.0", "node_modules", ".bin", "codex")
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	// The network sandbox's programs in the fake bin: the test's PATH is it and git's directory,
	// which holds them or not depending on the machine.
	for path, script := range map[string]string{cached: "#!/bin/sh\necho codex-cli 0.169.0\n", filepath.Join(bin, "bwrap"): "#!/bin/sh\n", filepath.Join(bin, "socat"): "#!/bin/sh\n"} {
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + bin + string(os.PathListSeparator) + filepath.Dir(git)
	env := []string{path, "OPENAI_API_KEY=k", "AUTONOMY_AGENT_CACHE=" + cache}
	out, _, code := cli(t, env, "doctor", dir)
	if code != 0 || !strings.Contains(out, "ok   agent codex: "+cached+" 0.169.0 (from the agent cache: codex is not on PATH)") ||
		!strings.Contains(out, "ok   autonomy: ") || !strings.Contains(out, "the runner puts the binary that runs it first on every session's PATH") ||
		strings.Contains(out, " gh: ") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	// A repository on GitHub: its skills call gh.
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/octo/fleet.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, _, code = cli(t, env, "doctor", dir)
	if code != 1 || !strings.Contains(out, "fix  gh: gh is not on PATH: install the GitHub CLI") {
		t.Errorf("doctor without gh: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, _, code = cli(t, env, "doctor", dir); code != 0 || !strings.Contains(out, "ok   gh: ") {
		t.Errorf("doctor with gh: exit %d\n%s", code, out)
	}
}

// Your own agent command runs in the network sandbox too: doctor asks for its bwrap and socat.
func TestDoctorAsksForTheSandboxOfAnAgentCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the network sandbox is Linux's")
	}
	dir := runnerFleet(t, codexFleet+"policy:\n  box:\n    local: { agent: [my-agent] }\n", map[string]string{"skills/develop/SKILL.md": "# develop\n"})
	out, _, code := cli(t, []string{"PATH=" + t.TempDir()}, "doctor", dir)
	if code != 1 || !strings.Contains(out, "fix  network sandbox bwrap: bwrap is not on PATH") || !strings.Contains(out, "fix  network sandbox socat: socat is not on PATH") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
}

// TestServeWarnsWithoutAModelKey: serve says as it starts when the sessions of an actor would
// run their agent CLI without a model proxy (no model key in its environment), and serves: with
// the opt-in they run so, without it its ticks defer them; with the key it says nothing of it.
func TestServeWarnsWithoutAModelKey(t *testing.T) {
	t.Parallel()
	dir := runnerFleet(t, codexFleet, map[string]string{"skills/develop/SKILL.md": "# develop\n"})
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho codex-cli 0.169.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, login, want string }{
		{"", "1", "autonomy: warning: no OPENAI_API_KEY in this environment: develop's session runs its agent CLI with the CLI's own login"},
		// serve serves all the same: its ticks defer what cannot start, and do the rest.
		{"", "", "autonomy: warning: no OPENAI_API_KEY in this environment: develop's agent CLI would run with its own login, without the model proxy"},
		{"k", "", ""},
	} {
		cmd := exec.Command(autonomyBin(t), "runner", "--dir", dir, "serve")
		cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "OPENAI_API_KEY="+tc.key, "OPENAI_BASE_URL=", "AUTONOMY_AGENT_LOGIN="+tc.login)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var before strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && !strings.Contains(sc.Text(), "autonomy: serving ") {
			before.WriteString(sc.Text() + "\n")
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		for sc.Scan() {
		}
		_ = cmd.Wait()
		said := strings.Contains(before.String(), "no OPENAI_API_KEY")
		if tc.want == "" && said || !strings.Contains(before.String(), tc.want) {
			t.Errorf("OPENAI_API_KEY=%q AUTONOMY_AGENT_LOGIN=%q: serve said before serving:\n%s", tc.key, tc.login, before.String())
		}
	}
}
