package local

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// operatorEnv is a runner's environment as an operator's shell holds it: secrets beside what a
// session needs.
func operatorEnv(path string) []string {
	return []string{"PATH=" + path, "HOME=/home/op", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm",
		"GH_TOKEN=ghp_operator", "GITHUB_TOKEN=ghs_operator", "AWS_SECRET_ACCESS_KEY=aws-operator",
		"OPENAI_API_KEY=operator", "ANTHROPIC_API_KEY=operator", "LISTED_TOKEN=listed", "CODEX_HOME=/home/op/.codex",
		"XDG_RUNTIME_DIR=/run/user/1000", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1"}
}

// envFleet's actors print their environment: a script, and an explicit agent command.
var envFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  script:
    behavior: scripts/env.sh
    triggers: [{ dispatch: true }]
  argv:
    behavior: skills/argv
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      env: [LISTED_TOKEN]
      agent: [/bin/sh, -c, 'env > "$AUTONOMY_DIR/env-$AUTONOMY_SESSION"; ` + deliverResult + `']
`,
	files: map[string]string{
		"scripts/env.sh":       "#!/bin/sh\nenv > \"$AUTONOMY_DIR/env-$AUTONOMY_SESSION\"\n" + scriptDone,
		"skills/argv/SKILL.md": "# argv\n",
	},
}

// A session's environment is an allowlist: neither a script nor an explicit agent command gets
// a code-host token, a cloud secret or the model credential of the runner's environment (the
// agent command holds the model proxy's placeholder instead); what the profile lists in
// policy.box.local.env, the locale and PATH reach it.
func TestSessionEnvIsAnAllowlist(t *testing.T) {
	dir := installFleet(t, envFleet, false)
	r := newRunner(t, dir, Options{Env: operatorEnv("/usr/bin:/bin")})
	for _, actor := range []string{"script", "argv"} {
		s := launch(t, r, LaunchRequest{Actor: actor})
		if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
			t.Fatalf("%s ended %s: %s", actor, got.Status, got.Reason)
		}
		env := readFile(t, filepath.Join(dir, "env-"+s.ID))
		// The session bus, the user's services (systemd-run --user runs outside every sandbox)
		// and an SSH agent are reached through these.
		secrets := []string{"GH_TOKEN=", "GITHUB_TOKEN=", "AWS_SECRET_ACCESS_KEY=", "CODEX_HOME=",
			"XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=", "SSH_AUTH_SOCK=", "OPENAI_API_KEY=operator", "ANTHROPIC_API_KEY=operator"}
		if actor == "script" {
			secrets = append(secrets, "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
		}
		for _, secret := range secrets {
			if strings.Contains(env, "\n"+secret) || strings.HasPrefix(env, secret) {
				t.Errorf("%s: the session's environment holds %s:\n%s", actor, secret, env)
			}
		}
		for _, want := range []string{"LISTED_TOKEN=listed\n", "HOME=/home/op\n", "LC_ALL=C\n", "LANG=C.UTF-8\n", "AUTONOMY_SESSION=" + s.ID + "\n"} {
			if !strings.Contains(env, want) {
				t.Errorf("%s: the session's environment lacks %q:\n%s", actor, want, env)
			}
		}
	}
}

// A bad name in policy.box.local.env, and a bad model budget or price, is refused at its
// position with the fix.
func TestBoxEnvAndModelErrors(t *testing.T) {
	for _, c := range []struct{ box, want string }{
		{`{ env: [GOOD, "BAD-NAME"] }`, `ir.yml:9:26: policy.box.local.env: "BAD-NAME" is not an environment variable name`},
		{`{ env: GH_TOKEN }`, `ir.yml:9:19: policy.box.local.env must be a list of environment variable names`},
		{`{ model: { budget: { requests: -1 } } }`, `ir.yml:9:43: policy.box.local.model.budget.requests is -1; it must be between 0 and`},
		{`{ model: { budget: { cost_usd: lots } } }`, `ir.yml:9:43: policy.box.local.model.budget.cost_usd must be a number`},
		{`{ model: { daily: { tokenz: 5 } } }`, `ir.yml:9:32: policy.box.local.model.daily.tokenz is not a budget limit`},
		{`{ model: { prices: { m: { input: -2 } } } }`, `ir.yml:9:45: policy.box.local.model.prices.m.input is -2; it must be a number of at least 0`},
		{`{ model: { budgt: {} } }`, `ir.yml:9:23: policy.box.local.model.budgt is not a model setting`},
	} {
		_, err := compileBox(t, c.box)
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s:\n got: %v\nwant: %s", c.box, err, c.want)
		}
	}
}

// A model mapping names the model and the proxy's budget and prices; a model name alone keeps
// the default budget.
func TestBoxModelPolicy(t *testing.T) {
	p := writeBoxProfile(t, `{ model: { name: gpt-5-codex, budget: { requests: 2, tokens: 1000, cost_usd: 0.5 }, daily: { cost_usd: 3 }, prices: { gpt-5-codex: { input: 1.25, cached_input: 0.125, output: 10 } } } }`)
	b, diags := readBox(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := ModelPolicy{Budget: modelproxy.Budget{Requests: 2, Tokens: 1000, CostUSD: 0.5}, Daily: modelproxy.Budget{CostUSD: 3},
		Prices: map[string]modelproxy.Price{"gpt-5-codex": {Input: 1.25, CachedInput: 0.125, Output: 10}, "*": modelproxy.DefaultPrices["*"]}}
	if b.model != "gpt-5-codex" || !reflect.DeepEqual(b.modelPolicy, want) {
		t.Errorf("model %q, policy %+v", b.model, b.modelPolicy)
	}
	b, _ = readBox(writeBoxProfile(t, `{ model: gpt-5-codex }`))
	if b.model != "gpt-5-codex" || !reflect.DeepEqual(b.modelPolicy, defaultModelPolicy()) {
		t.Errorf("model %q, policy %+v", b.model, b.modelPolicy)
	}
}

// A workflow's declared secrets and its MCP servers' env reach its run; a step playbook's steps,
// as a skill, get the preset's configuration but never its credential (they run behind the
// session's model proxy); nothing else does.
func TestAllowedNames(t *testing.T) {
	workflow := &ActorConfig{Workflow: true, Secrets: []string{"INBOX_TOKEN"},
		MCP: map[string]resolved.MCPServer{"tracker": {Command: []string{"srv"}, Env: []string{"TRACKER_TOKEN"}}}}
	steps := &ActorConfig{Workflow: true, Steps: true, Command: &Command{Argv: []string{"codex"}, Preset: "codex"}}
	skill := &ActorConfig{Skill: true, Command: &Command{Argv: []string{"codex"}, Preset: "codex"}}
	for _, c := range []struct {
		cfg  *ActorConfig
		name string
		want bool
	}{
		{workflow, "INBOX_TOKEN", true}, {workflow, "TRACKER_TOKEN", true}, {workflow, "GH_TOKEN", false},
		{steps, "OPENAI_API_KEY", false}, {steps, "OPENAI_BASE_URL", false}, {steps, "CODEX_HOME", true},
		{skill, "OPENAI_API_KEY", false}, {skill, "CODEX_HOME", true}, {skill, "LC_TIME", true}, {skill, "AWS_SECRET_ACCESS_KEY", false},
	} {
		if got := allowed(c.name, c.cfg); got != c.want {
			t.Errorf("allowed(%s) = %v for %+v", c.name, got, c.cfg)
		}
	}
}
