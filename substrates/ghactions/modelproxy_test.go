package ghactions

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// TestAgentStepsHoldNoSecret: in every agent job of every bundled and test profile, no step but
// the model proxy's references a secret; the agent's step (the one that runs the agent command
// or a playbook) comes after the proxy's, and the job ends with the usage report and the
// transcript's upload, whatever happened before.
func TestAgentStepsHoldNoSecret(t *testing.T) {
	for _, prof := range lintProfiles(t) {
		p, out := compileDir(t, prof)
		files := map[string][]byte{}
		for _, f := range out.Files {
			files[f.Path] = f.Data
		}
		for _, a := range p.Actors {
			if a.Kind.Value == "human" || !a.Skill {
				continue
			}
			var wf struct {
				Jobs map[string]struct {
					Steps []map[string]any `yaml:"steps"`
				} `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(files[WorkflowPath(a.Name.Value)], &wf); err != nil {
				t.Fatal(err)
			}
			job, ok := wf.Jobs["agent"]
			if !ok {
				continue
			}
			name := prof + "/" + a.Name.Value
			proxyAt, runAt := -1, -1
			for i, st := range job.Steps {
				text, _ := yaml.Marshal(st)
				runsAgent := strings.Contains(string(text), "AUTONOMY_AGENT_0") || strings.Contains(string(text), "playbook run")
				if runsAgent && runAt < 0 {
					runAt = i
				}
				if st["name"] == "Start the model proxy" {
					proxyAt = i
					continue
				}
				if strings.Contains(string(text), "secrets.") {
					t.Errorf("%s: step %q references a secret:\n%s", name, st["name"], text)
				}
			}
			if proxyAt < 0 || runAt < proxyAt {
				t.Errorf("%s: the model proxy (step %d) does not start before the agent (step %d)", name, proxyAt, runAt)
			}
			n := len(job.Steps)
			if n > 0 && job.Steps[n-1]["name"] == "Remove the agent's git directory" && job.Steps[n-1]["if"] == "always()" {
				n-- // after them, a jailed agent's job removes its git directory (egress.go)
			}
			// always(), unless the job's pause check stopped it (paused.go): then nothing ran to report.
			always := func(v any) bool {
				return v == "always()" || v == "always() && steps."+pausedStepID+".outcome != 'failure'"
			}
			if n < 2 || job.Steps[n-2]["name"] != "Report the model usage" || !always(job.Steps[n-2]["if"]) ||
				job.Steps[n-1]["name"] != "Upload the transcript" || !always(job.Steps[n-1]["if"]) {
				t.Errorf("%s: the job does not end with the usage report and the transcript, always: %v", name, job.Steps[max(0, n-2):])
			}
		}
	}
}

// TestModelBox: policy.box.gh-actions.model as a mapping names the model and the proxy's budget
// and prices, which reach the proxy's step as its policy; transcript_days is the transcript's
// retention; without them the documented defaults stand.
func TestModelBox(t *testing.T) {
	steps := func(out string) (start, upload map[string]any) {
		for _, st := range job(t, out, "agent")["steps"].([]any) {
			switch m := st.(map[string]any); m["name"] {
			case "Start the model proxy":
				start = m
			case "Upload the transcript":
				upload = m
			}
		}
		return start, upload
	}
	out := compileOK(t, refProfile(`      model: { name: gpt-5-mini, budget: { requests: 2, tokens: 1000, cost_usd: 0.5 }, prices: { gpt-5-mini: { input: 1, output: 2 } } }
      transcript_days: 7
`))
	wf := file(t, out, WorkflowPath("develop"))
	start, upload := steps(wf)
	env := start["env"].(map[string]any)
	pol, err := ghproxy.ParsePolicy(env[ghproxy.PolicyEnv].(string))
	if err != nil {
		t.Fatal(err)
	}
	if pol.Budget.Requests != 2 || pol.Budget.Tokens != 1000 || pol.Budget.CostUSD != 0.5 ||
		pol.Prices["gpt-5-mini"].Input != 1 || pol.Prices["gpt-5-mini"].Output != 2 || pol.Prices["*"] != ghproxy.DefaultPrices["*"] {
		t.Errorf("policy %+v", pol)
	}
	if env[ghproxy.APIEnv] != "openai" || env[ghproxy.CredentialEnv] != "OPENAI_API_KEY" || env["OPENAI_API_KEY"] != "${{ secrets.OPENAI_API_KEY }}" {
		t.Errorf("proxy env %v", env)
	}
	if upload["with"].(map[string]any)["retention-days"] != 7 {
		t.Errorf("upload %v", upload)
	}
	if got := job(t, wf, "agent")["env"].(map[string]any)["AUTONOMY_MODEL"]; got != "gpt-5-mini" {
		t.Errorf("the model is %v, want model.name", got)
	}

	start, upload = steps(file(t, compileOK(t, refProfile("      agent: claude\n")), WorkflowPath("develop")))
	env = start["env"].(map[string]any)
	var def ghproxy.Policy
	if err := json.Unmarshal([]byte(env[ghproxy.PolicyEnv].(string)), &def); err != nil || def.Budget != ghproxy.DefaultBudget || def.Prices != nil {
		t.Errorf("default policy %s: %v", env[ghproxy.PolicyEnv], err)
	}
	if env[ghproxy.APIEnv] != "anthropic" || env[ghproxy.CredentialEnv] != "ANTHROPIC_API_KEY" || upload["with"].(map[string]any)["retention-days"] != defaultTranscriptDays {
		t.Errorf("claude: proxy env %v, upload %v", env, upload)
	}
}

// TestModelBoxErrors: each bad setting is one positioned error that says what is wanted.
func TestModelBoxErrors(t *testing.T) {
	for box, want := range map[string]string{
		"model: { budget: { requests: -1 } }":        "model.budget.requests must be a non-negative integer",
		"model: { budget: { requests: 2.5 } }":       "model.budget.requests must be a non-negative integer",
		"model: { budget: { cost_usd: lots } }":      "model.budget.cost_usd must be a non-negative number",
		"model: { budget: { request: 2 } }":          `model.budget: unknown key "request"`,
		"model: { budget: 3 }":                       "model.budget must be a mapping",
		"model: { nmae: x }":                         `model: unknown key "nmae"`,
		"model: { prices: { gpt-5: 3 } }":            "model.prices.gpt-5 must be a mapping",
		"model: { prices: { gpt-5: { inptu: 3 } } }": `model.prices.gpt-5: unknown key "inptu"`,
		"transcript_days: 0":                         "transcript_days must be between 1 and 90",
		"transcript_days: 91":                        "transcript_days must be between 1 and 90",
		"model: [a]":                                 "model must be a string",
	} {
		_, err := compileErr(t, refProfile("      "+box+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ir.yml:") {
			t.Errorf("%s: got %v, want %q", box, err, want)
		}
	}
}
