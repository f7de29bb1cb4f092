//go:build linux

package effect_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// TestOwnAgentCommandGetsTheTools: the agent job of an actor run by your own agent command, as
// compiled and run step by step from the parsed workflow, gives the command the MCP server a
// preset's CLI gets, as the file AUTONOMY_MCP_CONFIG names; the command here is a tiny MCP client
// (the MCP Go SDK's, substrates/local/testdata/mcpclient) that calls the tools. Its comment lands
// on the work item through the apply job; a second one past tools.max.comment and a launch
// without agent:launch are refused and land nothing.
func TestOwnAgentCommandGetsTheTools(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin")
	client := filepath.Join(bin, "mcpclient")
	if out, err := exec.Command("go", "build", "-o", client, "../../local/testdata/mcpclient").CombinedOutput(); err != nil {
		t.Fatalf("go build mcpclient: %v\n%s", err, out)
	}
	calls := []string{"mcpclient", `comment={"item":"1","body":"From my own agent."}`, `comment={"item":"1","body":"Again."}`,
		`launch={"actor":"greeter"}`, `submit_result={"status":"done","summary":"Greeted.","done":["commented"]}`}
	argv, _ := json.Marshal(calls)
	fake := modelfake.Start(modelfake.Turn{Text: "Done."})
	defer fake.Close()
	f := newFleetWith(t, helloWith(t, `{ agent: `+string(argv)+`, tools: { max: { comment: 1 } } }`), nil, client)
	if f.item != 1 {
		t.Fatalf("the work item is #%d, the client comments on #1", f.item)
	}
	values := map[string]string{
		"github.token": "ghs_e2e", "secrets.OPENAI_API_KEY": proxyRealKey, "vars.AUTONOMY_MODEL_URL": fake.OpenAIBaseURL(),
		"github.event_name": "schedule", "github.ref": "refs/heads/main", "github.run_id": "4242",
		"github.sha": gitRun(t, f.root, "--git-dir", f.origin, "rev-parse", "refs/heads/main"),
	}
	t.Cleanup(func() { killProxy(values["runner.temp"]) })
	log, ran := f.r.job(f.wf("greeter"), "agent", values, false)
	if !ran {
		t.Fatalf("the agent job did not run\n%s", log)
	}
	for _, want := range []string{`comment ok:`, "comment refused:", "already used its 1 comment call", "launch refused:", "submit_result ok:"} {
		if !strings.Contains(log, want) {
			t.Errorf("the client's calls: no %q:\n%s", want, log)
		}
	}
	out, ran := f.r.job(f.wf("greeter"), "apply", values, false)
	if !ran {
		t.Fatalf("the apply job was skipped\n%s", out)
	}
	is, _ := f.fake.Issue(f.item)
	if !slices.Equal(is.Comments, []string{"From my own agent."}) {
		t.Errorf("issue #1's comments %q, want the first alone\n%s", is.Comments, out)
	}
	if runs := f.fake.Runs(); len(runs) != 0 {
		t.Errorf("a workflow was dispatched: %+v", runs)
	}
}
