package ghactions

import (
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// refProfile is a proposer, its reviewer and a person, with the reference's gh-actions keys.
func refProfile(box string) string {
	return head + `  develop:
    behavior: skills/a
    capabilities: [code:propose, tasks:converse]
    review: reviewer
    triggers: [{ dispatch: true, params: { ISSUE: subject.ref } }]
  reviewer:
    behavior: skills/a
    capabilities: [code:review]
    triggers: [{ dispatch: true, params: { PR: subject.ref } }]
  sweep:
    behavior: scripts/ask.ts
    capabilities: [tasks:converse]
    triggers: [{ cron: "0 * * * *" }]
  maintainer:
    kind: human
    behavior: humans/h
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true, params: { ISSUE: subject.ref } }]
policy:
  box:
    gh-actions:
` + box
}

// TestReferenceModelProxy: proxy_host and oidc_audience mint an OIDC token on the model job
// only, with the repository variables first and the profile's values as fallbacks, and no
// long-lived secret; no other permission widens.
func TestReferenceModelProxy(t *testing.T) {
	out := compileOK(t, refProfile(`      proxy_host: model-proxy.example.com
      oidc_audience: fleet-proxy
      model: deepseek/deepseek-v4-flash
      bot_name: fleet-bot
      bot_email: fleet-bot@users.noreply.github.com
`))
	for _, name := range []string{"develop", "reviewer"} {
		wf := file(t, out, WorkflowPath(name))
		j := job(t, wf, "agent")
		perms := j["permissions"].(map[string]any)
		if perms["id-token"] != "write" {
			t.Errorf("%s: the model job cannot mint the token: %v", name, perms)
		}
		want := map[string]any{"develop": map[string]any{"contents": "read", "pull-requests": "read", "issues": "read", "id-token": "write"},
			"reviewer": map[string]any{"contents": "read", "issues": "read", "pull-requests": "read", "id-token": "write"}}[name]
		if len(perms) != len(want.(map[string]any)) {
			t.Errorf("%s: permissions %v, want exactly %v", name, perms, want)
		}
		for k, v := range want.(map[string]any) {
			if perms[k] != v {
				t.Errorf("%s: %s is %v, want %v", name, k, perms[k], v)
			}
		}
		var run, start map[string]any
		for _, st := range j["steps"].([]any) {
			switch m := st.(map[string]any); m["name"] {
			case "Run " + name:
				run = m
			case "Start the model proxy":
				start = m
			}
		}
		// The token is minted by the model proxy's step, which holds it; the agent's step gets
		// neither the token nor what mints it.
		if runEnv := run["env"].(map[string]any); runEnv["AUTONOMY_OIDC_AUDIENCE"] != nil || strings.Contains(run["run"].(string), "ACTIONS_ID_TOKEN_REQUEST") {
			t.Errorf("%s: the agent's step mints a token: %v\n%s", name, runEnv, run["run"])
		}
		env := start["env"].(map[string]any)
		if env["AUTONOMY_OIDC_AUDIENCE"] != "${{ vars.MODEL_PROXY_OIDC_AUDIENCE || 'fleet-proxy' }}" ||
			env["AUTONOMY_MODEL_URL"] != "${{ vars.PUBLIC_AGENT_PROXY_HOST && format('https://{0}', vars.PUBLIC_AGENT_PROXY_HOST) || 'https://model-proxy.example.com' }}" ||
			env["AUTONOMY_CREDENTIAL_ENV"] != "OPENAI_API_KEY" || env["AUTONOMY_MODEL_URL_ENV"] != "OPENAI_BASE_URL" {
			t.Errorf("%s: run env %v", name, env)
		}
		if strings.Contains(wf, "secrets.") {
			t.Errorf("%s: a long-lived secret is still handed over:\n%s", name, wf)
		}
		script := start["run"].(string)
		if !strings.Contains(script, `export "${AUTONOMY_CREDENTIAL_ENV}=${token}"`) || !strings.Contains(script, "unset ACTIONS_ID_TOKEN_REQUEST_TOKEN") ||
			!strings.HasSuffix(script, `"$AUTONOMY_BIN" gh model-proxy`+"\n") {
			t.Errorf("%s: the token is not minted and handed over:\n%s", name, script)
		}
	}
	// A person's workflow and a script's job run no model: neither may mint a token.
	for _, name := range []string{"maintainer", "sweep"} {
		wf := file(t, out, WorkflowPath(name))
		if strings.Contains(wf, "id-token") || strings.Contains(wf, "AUTONOMY_OIDC_AUDIENCE") {
			t.Errorf("%s's workflow can mint a model token:\n%s", name, wf)
		}
	}
	env := job(t, file(t, out, WorkflowPath("develop")), "agent")["env"].(map[string]any)
	if env["GIT_AUTHOR_NAME"] != "fleet-bot" || env["GIT_COMMITTER_EMAIL"] != "fleet-bot@users.noreply.github.com" {
		t.Errorf("bot identity not used: %v", env)
	}
}

// TestReferenceKeyWarnings: a near miss, and a one-sided proxy setting each draw a positioned warning; a key
// nothing reads is carried silently, and null means not set.
func TestReferenceKeyWarnings(t *testing.T) {
	out := compileOK(t, refProfile(`      propose_dispatch_checks: [security-gate.yml]
      propose_dispatch_reviews: [compliance-verifier.yml]
      commit_signing: verified-api
      private_egress_guard: true
      proxy_hots: typo.example
      oidc_audience: fleet-proxy
      org_specific_knob: { anything: [1, 2] }
      model: ~
`))
	got := out.Warnings.String()
	for _, want := range []string{
		`ir.yml:29:7: warning: policy.box.gh-actions.proxy_hots is carried verbatim and read by nothing (did you mean "proxy_host"?)`,
		"ir.yml:30:7: warning: policy.box.gh-actions.oidc_audience is set without proxy_host: the model endpoint comes from the repository variable PUBLIC_AGENT_PROXY_HOST alone",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no warning %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "propose_dispatch") || strings.Contains(got, "commit_signing") {
		t.Errorf("the dispatches autonomy gh propose makes are warned about:\n%s", got)
	}
	if strings.Contains(got, "org_specific_knob") {
		t.Errorf("a key nothing reads is warned about:\n%s", got)
	}
	if env := job(t, file(t, out, WorkflowPath("develop")), "agent")["env"].(map[string]any); env["AUTONOMY_MODEL"] != nil {
		t.Errorf("model: ~ set a model: %v", env["AUTONOMY_MODEL"])
	}
	if !strings.Contains(file(t, out, ".autonomy/policy.json"), `"org_specific_knob": {`) {
		t.Error("the unknown key is not carried to the agents")
	}
}

// TestGithubBoxAlias: policy.box.github is read as gh-actions, with a warning; both is an error.
func TestGithubBoxAlias(t *testing.T) {
	y := agent("", dispatchRef) + "policy:\n  box:\n    github: { model: m1 }\n"
	out := compileOK(t, y)
	if !strings.Contains(out.Warnings.String(), "policy.box.github is the deprecated name of policy.box.gh-actions") ||
		!strings.Contains(file(t, out, WorkflowPath("a")), "AUTONOMY_MODEL: m1") {
		t.Errorf("alias not read:\n%s", out.Warnings)
	}
	_, err := compileErr(t, y+"    gh-actions: { model: m2 }\n")
	diags, _ := err.(ir.Diagnostics)
	if !strings.Contains(diags.Error(), "ir.yml:12:5: policy.box.github and policy.box.gh-actions are both given; they are one setting") {
		t.Errorf("both spellings: %v", err)
	}
}
