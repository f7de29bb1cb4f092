//go:build unix

package local

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// mcpClient builds testdata/mcpclient, a tiny MCP client (the MCP Go SDK's) that starts the
// server $AUTONOMY_MCP_CONFIG names and calls the tools its arguments name.
func mcpClient(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpclient")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/mcpclient").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./testdata/mcpclient: %v\n%s", err, out)
	}
	return bin
}

// customToolsFleet: lead, a skill run by an agent command of its own, holds tasks:converse only,
// with one comment allowed.
const customToolsFleet = `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: skills/lead
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
policy:
  box:
    local: { agent: AGENT, tools: { max: { comment: 1 } } }
`

// Your own agent command gets the session's MCP server as a configuration file at
// AUTONOMY_MCP_CONFIG (the mcpServers shape): an MCP client it starts reaches the same tools as a
// preset's session. Its comment is recorded, a second one past tools.max.comment and a launch
// without agent:launch are refused and land nothing, and its submit_result is the session's
// result. The same holds for a command given by AUTONOMY_LOCAL_AGENT over a preset.
func TestOwnAgentCommandGetsTheTools(t *testing.T) {
	client := mcpClient(t)
	calls := []string{`comment={"item":"7","body":"From my own agent."}`, `comment={"item":"7","body":"Again."}`,
		`launch={"actor":"worker"}`, `submit_result={"status":"done","summary":"Commented on item 7.","done":["commented"]}`}
	argv, _ := json.Marshal(append([]string{client}, calls...))
	for name, c := range map[string]struct{ agent, env string }{
		"box":      {agent: string(argv)},
		"override": {agent: "codex", env: AgentEnv + "=" + string(argv)},
	} {
		t.Run(name, func(t *testing.T) {
			f := fleet{yml: strings.Replace(customToolsFleet, "AGENT", c.agent, 1), files: map[string]string{
				"skills/lead/SKILL.md": "# lead\nComment on item 7.\n", "scripts/noop.sh": "#!/bin/sh\ntrue\n"}}
			dir := installFleet(t, f, true)
			env := operatorEnv(os.Getenv("PATH"))
			if c.env != "" {
				env = append(env, c.env)
			}
			r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
			s := launch(t, r, LaunchRequest{Actor: "lead"})
			got := waitEnded(t, r, s.ID)
			r.Wait()
			log := sessionLogOf(r, s.ID)
			if got.Status != ir.Done {
				t.Fatalf("ended %s (%s)\n%s", got.Status, got.Reason, log)
			}
			for _, want := range []string{`comment ok: {"recorded":true`, "comment refused:", "already used its 1 comment call",
				"launch refused:", "submit_result ok:"} {
				if !strings.Contains(log, want) {
					t.Errorf("the client's calls: no %q:\n%s", want, log)
				}
			}
			if n := countEvents(t, r, s.ID, toolEvent("comment")); n != 1 {
				t.Errorf("%d comments recorded, want the first alone", n)
			}
			if all, _ := r.Store.List(t.Context(), store.ListOptions{All: true}); len(all) != 1 {
				t.Errorf("%d sessions, want the lead's alone: its launch was refused", len(all))
			}
			if !strings.Contains(got.Verified, "delivered by submit_result") {
				t.Errorf("the session's result is not the submitted one: verified %q", got.Verified)
			}
		})
	}
}
