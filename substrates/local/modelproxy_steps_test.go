//go:build unix

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A step playbook's steps run the preset behind the session's model proxy, as a skill does: each
// step's agent holds the placeholder and the proxy's URL, never the runner's credential or its
// base URL.
func TestStepPlaybookRunsBehindTheProxy(t *testing.T) {
	f := fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  writer:
    behavior: playbooks/one.md
    triggers: [{ dispatch: true }]
policy:
  box:
    local: { agent: codex }
`, files: map[string]string{"playbooks/one.md": "# One\n\n## STEP 1: One\n\nDo one.\n"}}
	dir := installFleet(t, f, false)
	out := filepath.Join(t.TempDir(), "env")
	path := fakeProgram(t, "codex", "#!/bin/sh\ncat > /dev/null\nenv > '"+out+"'\n")
	env := append(operatorEnv(path), "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
	r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
	s := launch(t, r, LaunchRequest{Actor: "writer"})
	waitEnded(t, r, s.ID) // the fake agent answers nothing: how the step ends is not what is tested
	r.Wait()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the step's agent never ran: %v\n%s", err, sessionLogOf(r, s.ID))
	}
	seen := "\n" + string(data)
	if !strings.Contains(seen, "\nOPENAI_API_KEY=autonomy-proxy-") || !strings.Contains(seen, "\nOPENAI_BASE_URL=http://127.0.0.1:") ||
		strings.Contains(seen, "=operator") || strings.Contains(seen, ":9/v1") {
		t.Errorf("the step's agent's model variables:\n%s", seen)
	}
}
