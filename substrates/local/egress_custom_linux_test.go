package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// Your own agent command behind the model proxy sees no hidden login, not even through another
// of the operator's processes: /proc/PID/root showed the whole filesystem, and /proc/PID/environ
// the operator's keys (attack26); and it cannot write the installation's read-only folder that
// way. Its processes have a process namespace of their own.
func TestACustomAgentSeesNoOtherProcess(t *testing.T) {
	t.Parallel()
	op := exec.Command("sleep", "300")
	op.Env = []string{"OPENAI_API_KEY=sk-LOGIN-operator-env"}
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Process.Kill(); op.Wait() })
	pid := strconv.Itoa(op.Process.Pid)
	fake := modelfake.Start(modelfake.Turn{Text: "Done."})
	defer fake.Close()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  argv:
    behavior: skills/argv
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      agent: [probe-agent]
`, files: map[string]string{"skills/argv/SKILL.md": "# argv\n"}}, false)
	out := filepath.Join(t.TempDir(), "probe")
	path := fakeProgram(t, "probe-agent", `#!/bin/sh
cat > /dev/null
{
cat "$HOME/.git-credentials" "/proc/`+pid+`/root$HOME/.git-credentials"
tr '\0' '\n' </proc/`+pid+`/environ
touch "/proc/`+pid+`/root$AUTONOMY_DIR/.autonomy/planted" && echo planted
ls /proc | grep -c '^[0-9]'
echo probed
} > `+out+` 2>&1
echo done
`)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".git-credentials"), []byte("https://x:sk-LOGIN-git@github.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := sessionenv.With(append(operatorEnv(path), "OPENAI_BASE_URL="+fake.OpenAIBaseURL()), "HOME="+home)
	r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
	s := waitEndedWithin(t, r, launch(t, r, LaunchRequest{Actor: "argv"}).ID, 60)
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), "probed") {
		t.Fatalf("the agent did not run (%s: %s): %v\n%s\n%s", s.Status, s.Reason, err, data, sessionLogOf(r, s.ID))
	}
	if strings.Contains(string(data), "sk-LOGIN") || strings.Contains(string(data), "\nplanted\n") {
		t.Errorf("the agent reached past its jail:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, ".autonomy", "planted")); !os.IsNotExist(err) {
		t.Errorf("the agent wrote the installation's read-only folder: %v", err)
	}
}
