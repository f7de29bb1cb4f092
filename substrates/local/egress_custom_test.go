//go:build linux

package local

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// probeAgent is an agent command that reads its prompt and writes, to probe-$AUTONOMY_SESSION in
// the installation, its environment and what it reached: another port of the host's loopback
// (other), an arbitrary host directly and through the egress proxy, and the model proxy.
func probeAgent(other string) string {
	return `#!/bin/sh
cat > /dev/null
{
env | sed 's/^/env: /'
curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:` + other + `/ && echo other-reached || echo loopback-blocked
curl -sS --noproxy '*' --max-time 5 http://example.com/ && echo direct-reached || echo direct-blocked
curl -sS --max-time 5 https://example.com/ && echo egress-reached || echo egress-refused
curl -sS --noproxy '*' --max-time 10 -o /dev/null -w 'model=%{http_code}\n' -H "Authorization: Bearer $OPENAI_API_KEY" \
  -H 'Content-Type: application/json' -d '{"model":"gpt-5.5","input":"hi"}' "$OPENAI_BASE_URL/responses"
} > "$AUTONOMY_DIR/probe-$AUTONOMY_SESSION" 2>&1
echo done
`
}

// ownCommandFleet runs your own agent command, probe-agent, as a skill's agent (argv) and as a step
// playbook's steps' agent (steps).
var ownCommandFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  argv:
    behavior: skills/argv
    triggers: [{ dispatch: true }]
  steps:
    behavior: playbooks/one.md
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      agent: [probe-agent]
`, files: map[string]string{"skills/argv/SKILL.md": "# argv\n", "playbooks/one.md": "# One\n\n## STEP 1: One\n\nDo one.\n"}}

// Your own agent command, as a skill's agent and as a step playbook's steps' agent, runs in the
// preset's network sandbox with the allowlisted environment: from inside, another loopback port
// and an arbitrary host are unreachable, the model proxy answers with the runner's credential
// (the model endpoint saw it), and no operator secret, the model credential included, is there.
func TestCustomAgentCommandsAreJailed(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other-reached") }))
	defer other.Close()
	fake := modelfake.Start(modelfake.Turn{Text: "Done."})
	defer fake.Close()
	dir := installFleet(t, ownCommandFleet, false)
	path := fakeProgram(t, "probe-agent", probeAgent(portOfTest(other.URL)))
	env := append(operatorEnv(path), "OPENAI_BASE_URL="+fake.OpenAIBaseURL())
	r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
	for _, actor := range []string{"argv", "steps"} {
		s := launch(t, r, LaunchRequest{Actor: actor})
		waitEndedWithin(t, r, s.ID, 60) // how a step ends on "done" is not what is tested
		data, err := os.ReadFile(filepath.Join(dir, "probe-"+s.ID))
		if err != nil {
			t.Fatalf("%s: the agent never ran: %v\n%s", actor, err, sessionLogOf(r, s.ID))
		}
		seen := string(data)
		for _, want := range []string{"loopback-blocked", "direct-blocked", "egress-refused", "model=200",
			"env: OPENAI_API_KEY=autonomy-proxy-", "env: OPENAI_BASE_URL=http://127.0.0.1:", "env: HTTPS_PROXY=http://127.0.0.1:"} {
			if !strings.Contains(seen, want) {
				t.Errorf("%s: its probe lacks %q:\n%s\n%s", actor, want, seen, sessionLogOf(r, s.ID))
			}
		}
		for _, secret := range []string{"=operator", "ghp_operator", "ghs_operator", "aws-operator", "other-reached", "direct-reached", "egress-reached", fake.URL()} {
			if strings.Contains(seen, secret) {
				t.Errorf("%s: its probe holds %q:\n%s", actor, secret, seen)
			}
		}
	}
	var keys []string
	for _, req := range fake.Requests() {
		keys = append(keys, req.Header.Get("Authorization"))
	}
	if len(keys) != 2 || keys[0] != "Bearer operator" || keys[1] != "Bearer operator" {
		t.Errorf("the model endpoint saw the keys %q, want the runner's credential from each session's proxy", keys)
	}
}

// Your own agent command cannot reach a login the jail hides another way: not by unmounting what
// hides it, nor through another of the operator's processes' /proc/PID/root, which shows the
// filesystem as that process sees it (attack26: a runner run as root let it). It runs in a user
// namespace of its own with no capability (egress.Confinement.NoUserNS), and in the runner's pid
// namespace still, where its session tools prove who it is by its ancestry.
func TestOwnAgentCommandCannotReachAHiddenLoginAnotherWay(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "Done."})
	defer fake.Close()
	home := t.TempDir()
	for path, body := range map[string]string{".git-credentials": "https://x:sk-HIDDEN-1@example.com", ".ssh/id_ed25519": "sk-HIDDEN-2"} {
		full := filepath.Join(home, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Another of the operator's processes, outside any jail.
	outside := exec.Command("sleep", "120")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outside.Process.Kill(); outside.Wait() }()
	pid := strconv.Itoa(outside.Process.Pid)
	dir := installFleet(t, ownCommandFleet, false)
	path := fakeProgram(t, "probe-agent", `#!/bin/sh
cat > /dev/null
{
cat "$HOME/.git-credentials" "$HOME/.ssh/id_ed25519"
cat /proc/`+pid+`/root"$HOME/.git-credentials" /proc/`+pid+`/root"$HOME/.ssh/id_ed25519"
umount "$HOME/.ssh" && cat "$HOME/.ssh/id_ed25519"
umount -l "$HOME/.ssh" && cat "$HOME/.ssh/id_ed25519"
echo mine > "$AUTONOMY_DIR/theirs/written-$AUTONOMY_SESSION" && echo wrote-theirs
chown 1000:1000 "$AUTONOMY_DIR/theirs/written-$AUTONOMY_SESSION" && echo chowned
echo probed
} > "$AUTONOMY_DIR/probe-$AUTONOMY_SESSION" 2>&1
`+deliverResult+`
`)
	// A folder of another user's: a runner run as root keeps its powers over files (attack32:
	// dropping every capability had its agent fail to write there, chown, or unpack an archive).
	theirs := filepath.Join(dir, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(theirs, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	env := append(operatorEnv(path), "OPENAI_BASE_URL="+fake.OpenAIBaseURL(), "HOME="+home)
	r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
	for _, actor := range []string{"argv", "steps"} {
		s := launch(t, r, LaunchRequest{Actor: actor})
		waitEndedWithin(t, r, s.ID, 60)
		data, err := os.ReadFile(filepath.Join(dir, "probe-"+s.ID))
		if err != nil {
			t.Fatalf("%s: the agent never ran: %v\n%s", actor, err, sessionLogOf(r, s.ID))
		}
		seen := string(data)
		if !strings.Contains(seen, "probed") || strings.Contains(seen, "sk-HIDDEN") {
			t.Errorf("%s: from inside the jail:\n%s", actor, seen)
		}
		if root && (!strings.Contains(seen, "wrote-theirs") || !strings.Contains(seen, "chowned")) {
			t.Errorf("%s: run as root, it lost its powers over files:\n%s", actor, seen)
		}
	}
}
