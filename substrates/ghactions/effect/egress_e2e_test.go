//go:build linux

package effect_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// TestEgress: the agent job as compiled, run step by step with the real pinned codex and claude
// scripted to use its shell tool: another port of the runner's loopback is unreachable while the
// job completes through the model proxy; through the egress proxy, the address
// policy.box.gh-actions.egress.allow lists is reached (a test server on loopback: listed as an
// IP literal, which private_egress_guard, off by default, lets through) and another is refused.
func TestEgress(t *testing.T) {
	for _, c := range []struct{ preset, box, cred string }{
		{"codex", "model: gpt-5-codex", "OPENAI_API_KEY"},
		{"claude", "agent: claude, model: claude-sonnet-4-5", "ANTHROPIC_API_KEY"},
	} {
		t.Run(c.preset, func(t *testing.T) { egressRun(t, c.preset, c.box, c.cred) })
	}
}

func egressRun(t *testing.T, preset, box, cred string) {
	cli := agentclitest.Require(t, preset)
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "target-reached") }))
	defer target.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other-reached") }))
	defer other.Close()
	tp, op := port(target.URL), port(other.URL)
	fake := modelfake.Start(
		modelfake.Turn{Shell: "curl -sS --max-time 5 http://127.0.0.1:" + op + "/ || echo loopback-blocked"},
		modelfake.Turn{Shell: "env -u NO_PROXY -u no_proxy curl -sSk --max-time 10 https://127.0.0.1:" + tp + "/; echo; env -u NO_PROXY -u no_proxy curl -sSk --max-time 10 https://127.0.0.2:" + tp + "/ || echo unlisted-refused"},
		modelfake.Turn{Text: "Done."})
	defer fake.Close()
	base := fake.OpenAIBaseURL()
	if preset == "claude" {
		base = fake.AnthropicBaseURL()
	}
	run := runGreeter(t, helloWith(t, `{ `+box+`, egress: { allow: ["127.0.0.1:`+tp+`"] } }`), cli, cred, fake, base, false)
	if err := fake.Err(); err != nil {
		t.Fatalf("script: %v\n%s", err, run.log)
	}
	scripted := fake.Scripted()
	if len(scripted) < 3 || len(scripted[1].ToolOutputs) == 0 || len(scripted[2].ToolOutputs) == 0 {
		t.Fatalf("the tools' output never reached the model: %d scripted requests\n%s", len(scripted), run.log)
	}
	if loop := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]; strings.Contains(loop, "other-reached") || !strings.Contains(loop, "loopback-blocked") {
		t.Errorf("another loopback port from the agent's shell:\n%s", loop)
	}
	through := scripted[2].ToolOutputs[len(scripted[2].ToolOutputs)-1]
	if !strings.Contains(through, "target-reached") || !strings.Contains(through, "unlisted-refused") || !strings.Contains(through, "response 403") {
		t.Errorf("through the egress proxy:\n%s", through)
	}
	data, err := os.ReadFile(filepath.Join(run.artifact, ghproxy.EgressFile))
	if err != nil {
		t.Fatalf("the transcript artifact holds no egress log: %v", err)
	}
	seen := map[string]egress.Decision{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d egress.Decision
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("egress log line %q: %v", line, err)
		}
		seen[d.Target] = d
	}
	if !seen["127.0.0.1:"+tp].Allowed || seen["127.0.0.2:"+tp].Allowed || seen["127.0.0.2:"+tp].Reason == "" {
		t.Errorf("the egress log: %+v", seen)
	}
}

func port(u string) string {
	p, _ := url.Parse(u)
	return p.Port()
}
