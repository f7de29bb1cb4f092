package ghactions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// profile writes an ir.yml (and a skill, a script and a resource it may use) into a temp dir.
func profile(t *testing.T, irYML string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ir.yml":              irYML,
		"skills/a/SKILL.md":   "# a\n",
		"scripts/run.sh":      "#!/bin/sh\necho hi\n",
		"scripts/ask.ts":      "console.log('hi')\n",
		"scripts/tool.mjs":    "console.log('hi')\n",
		"scripts/env-bun.ts":  "#!/usr/bin/env bun\nconsole.log('hi')\n",
		"docs/x.md":           "x\n",
		"humans/h/SKILL.md":   "# h\n",
		".autonomy-extra.txt": "not a resource\n",
	}
	for name, content := range files {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compileErr compiles irYML and returns the output or the compile error.
func compileErr(t *testing.T, irYML string) (substrates.Output, error) {
	t.Helper()
	p, diags, err := ir.Check(profile(t, irYML))
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile invalid: %v\n%s", err, diags)
	}
	return Substrate{}.Compile(resolve(p))
}

func compileOK(t *testing.T, irYML string) substrates.Output {
	t.Helper()
	out, err := compileErr(t, irYML)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return out
}

func file(t *testing.T, out substrates.Output, path string) string {
	t.Helper()
	for _, f := range out.Files {
		if f.Path == path {
			return string(f.Data)
		}
	}
	t.Fatalf("no file %s in the output", path)
	return ""
}

// job parses a workflow and returns its job id's mapping as generic data.
func job(t *testing.T, wf, id string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(wf), &doc); err != nil {
		t.Fatalf("workflow does not parse: %v\n%s", err, wf)
	}
	jobs, _ := doc["jobs"].(map[string]any)
	j, ok := jobs[id].(map[string]any)
	if !ok {
		t.Fatalf("no job %s in:\n%s", id, wf)
	}
	return j
}

const head = "schema: autonomy.ir.v1\ntargets: [gh-actions]\nactors:\n"

func agent(caps string, triggers string) string {
	return head + "  a:\n    behavior: skills/a\n    capabilities: [" + caps + "]\n    triggers:\n" + triggers
}

const dispatchRef = "      - { dispatch: true, params: { ISSUE: subject.ref } }\n"

// TestPermissionsFromCapabilities: the agent job (the one that runs the model) reads only; the
// writes the capabilities map to go to a trusted job after it (propose, review, apply).
func TestPermissionsFromCapabilities(t *testing.T) {
	cases := []struct {
		caps string
		want map[string]any
		// effect is the trusted job that follows, with its permissions.
		effect     string
		effectWant map[string]any
	}{
		{"", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"}, "", nil},
		{"code:propose", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"},
			"propose", map[string]any{"contents": "write", "issues": "write", "pull-requests": "write", "actions": "write"}},
		{"code:review", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"},
			"review", map[string]any{"contents": "read", "pull-requests": "write", "statuses": "write"}},
		// A scope is enforced by autonomy gh propose, so the scoped proposer proposes too.
		{"code:propose@docs", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"},
			"propose", map[string]any{"contents": "write", "issues": "write", "pull-requests": "write", "actions": "write"}},
		// The model's job reads; the apply job writes what the capabilities map to, scoped too
		// (apply enforces the scope).
		{"tasks:author", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"},
			"apply", map[string]any{"contents": "read", "issues": "write"}},
		{"tasks:converse", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"},
			"apply", map[string]any{"contents": "read", "issues": "write"}},
		{"agent:launch", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"},
			"apply", map[string]any{"contents": "read", "actions": "write"}},
		{"agent:launch@a", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"},
			"apply", map[string]any{"contents": "read", "actions": "write"}},
		{"agent:cancel", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"},
			"apply", map[string]any{"contents": "read", "actions": "write"}},
		{"agent:list", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"}, "", nil},
		{"agent:list, agent:launch", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read", "actions": "read"},
			"apply", map[string]any{"contents": "read", "actions": "write"}},
		// GitHub cannot pause a run: apply reports the refusal, with no permission beyond reading.
		{"agent:update", map[string]any{"contents": "read", "issues": "read", "pull-requests": "read"},
			"apply", map[string]any{"contents": "read"}},
	}
	for _, c := range cases {
		out := compileOK(t, agent(c.caps, dispatchRef))
		wf := file(t, out, WorkflowPath("a"))
		samePerms(t, c.caps+" agent", job(t, wf, "agent")["permissions"], c.want)
		for _, kind := range []string{"propose", "review", "apply"} {
			// Every skill's run has an apply job: it verifies the session's result
			// (autonomy.result.v1), reading only when the capabilities map to no write.
			has := strings.Contains(wf, "\n  "+kind+":\n")
			if has != (kind == c.effect || kind == "apply") {
				t.Errorf("[%s]: has a %s job: %v", c.caps, kind, has)
			}
		}
		if c.effect != "apply" {
			samePerms(t, c.caps+" apply", job(t, wf, "apply")["permissions"], map[string]any{"contents": "read"})
		}
		if c.effect != "" {
			j := job(t, wf, c.effect)
			samePerms(t, c.caps+" "+c.effect, j["permissions"], c.effectWant)
			if j["needs"] != "agent" {
				t.Errorf("[%s]: the %s job needs %v, want agent", c.caps, c.effect, j["needs"])
			}
		}
	}
}

func samePerms(t *testing.T, what string, gotAny any, want map[string]any) {
	t.Helper()
	got, _ := gotAny.(map[string]any)
	if len(got) != len(want) {
		t.Errorf("[%s]: permissions %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("[%s]: %s = %v, want %v", what, k, got[k], v)
		}
	}
}

func TestUnexpressedCapabilitiesWarn(t *testing.T) {
	out := compileOK(t, agent("agent:launch@a, agent:update, code:propose@docs", dispatchRef))
	var msgs []string
	for _, w := range out.Warnings {
		msgs = append(msgs, w.Message)
	}
	all := strings.Join(msgs, "\n")
	if strings.Contains(all, "code:propose@docs") {
		t.Errorf("a scoped code:propose is warned about, but the propose job enforces it:\n%s", all)
	}
	if strings.Contains(all, "agent:launch@a") {
		t.Errorf("a scoped agent:launch is warned about, but the apply job enforces it:\n%s", all)
	}
	for _, want := range []string{`agent:update has no GitHub token permission`} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning containing %q in:\n%s", want, all)
		}
	}
	if !strings.Contains(file(t, out, WorkflowPath("a")), "AUTONOMY_CAPABILITIES: agent:launch@a agent:update code:propose@docs") {
		t.Error("the scope does not reach the agent as env")
	}
}

func TestBoxErrors(t *testing.T) {
	cases := []struct{ box, want string }{
		{"{ proxy_host: \"https://proxy.example\" }", `11:31: policy.box.gh-actions.proxy_host "https://proxy.example" is not a host name`},
		{"{ oidc_audience: \"a'b\" }", `oidc_audience "a'b" is not a valid audience`},
		{"{ bot_name: fleet, git: { name: other } }", `11:43: policy.box.gh-actions.bot_name and git.name both set the same thing; bot_name is the reference implementation's spelling (keep one of them)`},
		{"{ credential: { secret: KEY }, proxy_host: p.example }", `policy.box.gh-actions.proxy_host and credential both set the same thing`},
		{"{ propose_dispatch_checks: [\"../x.yml\"] }", `propose_dispatch_checks: "../x.yml" is not a workflow file name`},
		{"{ commit_signing: gpg }", `commit_signing "gpg" is not a signing mode`},
		{"{ requiredChecks: [ci, \"\"] }", `policy.box.gh-actions.requiredChecks item is empty`},
		{"{ requiredChecks: ci }", `requiredChecks`},
		{"{ private_egress_guard: yes please }", `private_egress_guard must be true or false`},
		{"{ agent: codex exec }", `policy.box.gh-actions.agent: unknown preset "codex exec" (one of: claude, codex`},
		{"{ agent: [] }", `policy.box.gh-actions.agent is empty`},
		{"{ agent: { preset: gemini } }", `policy.box.gh-actions.agent: unknown preset "gemini"`},
		{"{ agent: { preset: codex, version: latest } }", `policy.box.gh-actions.agent.version "latest" is not an exact version`},
		{"{ agent: { preset: codex, verison: 1.0.0 } }", `policy.box.gh-actions.agent: unknown key "verison"`},
		{"{ agent: [codex, \"{result}\"] }", `agent item {result} is a placeholder only presets use`},
		{"{ trustedRoles: [OWNER, CONTRIBUTOR] }", `trustedRoles: "CONTRIBUTOR" is not a trusted role (CONTRIBUTOR includes people outside the repository's collaborators`},
		{"{ trustedRoles: [] }", `trustedRoles is empty`},
		{"{ credential: { token: X } }", `credential: unknown kind "token"`},
		{"{ credential: { oidc: { url: \"https://x\" } } }", `credential.oidc has no audience`},
		{"{ credential: { oidc: { audience: a, url: \"http://x\" } } }", `credential.oidc.url "http://x" is not an https URL`},
		{"{ credential: { secret: GITHUB_TOKEN } }", `credential.secret: "GITHUB_TOKEN" is reserved`},
		{"{ credential: { secret: GH_TOKEN } }", `credential.secret: "GH_TOKEN" is reserved`},
		{"{ credential: { secret: { name: KEY, env: git_dir } } }", `credential.secret.env: "git_dir" is reserved`},
		{"{ credential: { secret: ISSUE } }", `actor "a": param ISSUE has the name policy.box.gh-actions.credential gives the model credential`},
		{"{ credential: { secret: \"A-B\" } }", `credential.secret: "A-B" is not a valid name`},
		{"{ runsOn: \"ubuntu latest\" }", `runsOn: "ubuntu latest" is not a runner label`},
		{"{ git: { mail: x } }", `git: unknown key "mail" (did you mean "email"?)`},
		{"{ model: [a] }", `policy.box.gh-actions.model must be a string`},
	}
	for _, c := range cases {
		y := agent("", dispatchRef) + "policy:\n  box:\n    gh-actions: " + c.box + "\n"
		_, err := compileErr(t, y)
		var diags ir.Diagnostics
		if !errors.As(err, &diags) {
			t.Errorf("%s: got %v, want diagnostics", c.box, err)
			continue
		}
		if !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%s:\n got: %s\nwant: %s", c.box, diags.Error(), c.want)
		}
	}
}

func TestParamsResolvedFromSources(t *testing.T) {
	out := compileOK(t, agent("tasks:converse", `      - event: issue_comment
        params: { ISSUE: subject.ref, TEXT: subject.text, ROLE: subject.actorRole }
      - dispatch: true
        params: { ISSUE: subject.ref, WHO: subject.actor, WHY: trigger.kind }
      - cron: "0 9 * * 1"
        params: { WHY: trigger.kind }
`))
	env, _ := job(t, file(t, out, WorkflowPath("a")), "agent")["env"].(map[string]any)
	want := map[string]string{
		"ISSUE": "${{ github.event_name == 'issue_comment' && (github.event.issue.number) || github.event_name == 'workflow_dispatch' && (inputs.ISSUE) || '' }}",
		"TEXT":  "${{ github.event_name == 'issue_comment' && (github.event.comment.body) || '' }}",
		"ROLE":  "${{ github.event_name == 'issue_comment' && (github.event.comment.author_association) || '' }}",
		"WHO":   "${{ github.event_name == 'workflow_dispatch' && (github.actor == 'github-actions[bot]' && inputs.WHO || github.actor) || '' }}", // TestDispatchCannotForgeWhoOrRole evaluates it
		"WHY":   "${{ github.event_name == 'workflow_dispatch' && (inputs.WHY || github.event_name) || github.event_name == 'schedule' && (github.event_name) || '' }}",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s:\n got %v\nwant %s", k, env[k], v)
		}
	}
	wf := file(t, out, WorkflowPath("a"))
	for _, s := range []string{"      ISSUE:\n        description: subject.ref\n", "      WHO:\n", "      WHY:\n", "      AUTONOMY_CORRELATION:\n", "inputs.AUTONOMY_CORRELATION && format('a [{0}]'"} {
		if !strings.Contains(wf, s) {
			t.Errorf("workflow lacks %q:\n%s", s, wf)
		}
	}
	// The comment trigger is gated on the trusted roles, and on a command addressed to a.
	if !strings.Contains(wf, `(github.event_name != 'issue_comment' || contains(fromJSON('["OWNER","MEMBER","COLLABORATOR"]'), github.event.comment.author_association) && `+commandCond("a")+`)`) {
		t.Errorf("issue_comment is not gated:\n%s", wf)
	}
}

func TestTrustedRolesNarrow(t *testing.T) {
	y := agent("", "      - { event: pull_request_target }\n") + "policy:\n  box:\n    gh-actions: { trustedRoles: [OWNER] }\n"
	wf := file(t, compileOK(t, y), WorkflowPath("a"))
	if !strings.Contains(wf, `github.event.pull_request.head.repo.full_name == github.repository || contains(fromJSON('["OWNER"]'), github.event.pull_request.author_association)`) {
		t.Errorf("pull_request_target not gated on OWNER or same repo:\n%s", wf)
	}
}

func TestEventConfigsMerged(t *testing.T) {
	wf := file(t, compileOK(t, agent("", `      - { event: issues, config: { types: [opened] } }
      - { event: issues, config: { types: [labeled, opened] } }
      - { event: push, config: { branches: [main] } }
      - { event: push }
`)), WorkflowPath("a"))
	if !strings.Contains(wf, "  issues:\n    types: [opened, labeled]\n") {
		t.Errorf("issues types not unioned:\n%s", wf)
	}
	if !strings.Contains(wf, "  push: null\n") {
		t.Errorf("a push trigger without filter must fire on every push:\n%s", wf)
	}
}

func TestCompileWarnings(t *testing.T) {
	out := compileOK(t, agent("", `      - cron: "*/2 * * * *"
`))
	all := out.Warnings.String()
	for _, want := range []string{`cron "*/2 * * * *" fires every 2m0s, but GitHub runs schedules at most every 5 minutes`} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
}

// TestScriptBehavior: a script runs by its #! line, else by its extension, with nothing but Bun
// installed for TypeScript; the model agent is not installed for it. Its result is uploaded for
// its apply job.
func TestScriptBehavior(t *testing.T) {
	cases := []struct {
		behavior string
		run      []string
		bun      bool
	}{
		{"scripts/run.sh", []string{"/bin/sh"}, false},
		{"scripts/ask.ts", []string{"bun"}, true},
		{"scripts/tool.mjs", []string{"node"}, false},
		{"scripts/env-bun.ts", []string{"/usr/bin/env", "bun"}, true},
	}
	for _, c := range cases {
		out := compileOK(t, head+"  s:\n    behavior: "+c.behavior+"\n    triggers: [{ cron: \"0 * * * *\" }]\n")
		steps, _ := job(t, file(t, out, WorkflowPath("s")), "agent")["steps"].([]any)
		var uses []string
		var run map[string]any
		for _, st := range steps {
			m := st.(map[string]any)
			if u, ok := m["uses"].(string); ok {
				uses = append(uses, strings.Split(u, "@")[0])
			}
			if m["name"] == "Install the agent" {
				t.Errorf("%s: the model agent is installed for a script", c.behavior)
			}
			if m["name"] == "Run s" {
				run = m
			}
		}
		wantUses := []string{"actions/checkout", "actions/upload-artifact"}
		if c.bun {
			wantUses = []string{"oven-sh/setup-bun", "actions/checkout", "actions/upload-artifact"}
		}
		if !reflect.DeepEqual(uses, wantUses) {
			t.Errorf("%s: steps use %v, want %v", c.behavior, uses, wantUses)
		}
		env, _ := run["env"].(map[string]any)
		var argv []string
		for i := 0; env[fmt.Sprintf("AUTONOMY_RUN_%d", i)] != nil; i++ {
			argv = append(argv, env[fmt.Sprintf("AUTONOMY_RUN_%d", i)].(string))
		}
		if _, ok := env["OPENAI_API_KEY"]; ok {
			t.Errorf("%s: a script, which runs no model, is handed the model credential", c.behavior)
		}
		if !reflect.DeepEqual(argv, c.run) || !strings.Contains(run["run"].(string), `"$AUTONOMY_BEHAVIOR"`) {
			t.Errorf("%s: runs with %q (script %q), want %q then the behavior", c.behavior, argv, run["run"], c.run)
		}
	}
}

func TestHumanWithoutTasksCapability(t *testing.T) {
	out := compileOK(t, head+"  h:\n    kind: human\n    behavior: humans/h\n    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]\n")
	wf := file(t, out, WorkflowPath("h"))
	if strings.Contains(wf, "resolve:") || strings.Contains(wf, "  issue_comment:") || strings.Contains(wf, "issues: write") {
		t.Errorf("a human without tasks capabilities must get no write and no resolve job:\n%s", wf)
	}
	if !strings.Contains(out.Warnings.String(), `human actor "h" holds neither tasks:converse nor tasks:author`) {
		t.Errorf("missing warning:\n%s", out.Warnings)
	}
}

func TestResourceInGeneratedDirRefused(t *testing.T) {
	dir := profile(t, agent("", dispatchRef)+"resources: [.autonomy-extra.txt]\n")
	if err := os.MkdirAll(filepath.Join(dir, ".autonomy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".autonomy/x.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(agent("", dispatchRef)+"resources: [.autonomy/x.md]\n"), 0o644)
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	_, err = Substrate{}.Compile(resolve(p))
	if err == nil || !strings.Contains(err.Error(), `resource ".autonomy/x.md" would be installed inside .autonomy/, which gh-actions generates`) {
		t.Errorf("got %v", err)
	}
}

// TestReviewerReachable: an actor named in another's review: gets workflow_dispatch with its
// ref input even when it declares only events or a cron, and the param resolves from whichever
// trigger fired (the number of a pull_request_target, or the input).
func TestReviewerReachable(t *testing.T) {
	prt := "      - { event: pull_request_target, config: { types: [opened] }, params: { NUM: subject.ref } }\n"
	cases := []struct {
		name, triggers, input, expr string
	}{
		{"cron only", "      - { cron: \"0 * * * *\" }\n", "PR", "${{ github.event_name == 'workflow_dispatch' && (inputs.PR) || '' }}"},
		{"events only", prt, "NUM", "${{ github.event_name == 'pull_request_target' && (github.event.pull_request.number) || github.event_name == 'workflow_dispatch' && (inputs.NUM) || '' }}"},
	}
	for _, c := range cases {
		y := head + "  p:\n    behavior: skills/a\n    capabilities: [code:propose]\n    triggers: [{ dispatch: true }]\n    review: r\n" +
			"  r:\n    behavior: skills/a\n    capabilities: [code:review]\n    triggers:\n" + c.triggers
		out := compileOK(t, y)
		if strings.Contains(out.Warnings.String(), "no dispatch trigger") {
			t.Errorf("%s: warned:\n%s", c.name, out.Warnings)
		}
		var wf struct {
			On   map[string]yaml.Node
			Jobs map[string]struct{ Env map[string]string }
		}
		if err := yaml.Unmarshal([]byte(file(t, out, WorkflowPath("r"))), &wf); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Inputs map[string]struct{ Description string }
		}
		n := wf.On["workflow_dispatch"]
		if err := n.Decode(&d); err != nil || d.Inputs[c.input].Description != "subject.ref" {
			t.Errorf("%s: workflow_dispatch inputs %v (%v), want %s", c.name, d.Inputs, err, c.input)
		}
		if got := wf.Jobs["agent"].Env[c.input]; got != c.expr {
			t.Errorf("%s: %s resolves from %q, want %q", c.name, c.input, got, c.expr)
		}
		if got := wf.Jobs["review"].Env["AUTONOMY_SUBJECT"]; !strings.Contains(got, "inputs."+c.input) {
			t.Errorf("%s: the review job's subject %q does not read the input", c.name, got)
		}
		p := file(t, out, WorkflowPath("p"))
		if !strings.Contains(p, "AUTONOMY_REVIEWER_WORKFLOW: r.yml") || !strings.Contains(p, "AUTONOMY_REVIEWER_REF_INPUT: "+c.input) {
			t.Errorf("%s: the proposer does not receive its reviewer's workflow and input", c.name)
		}
	}
}

// quoteSeeds are strings the emitter once wrote wrong, and the kinds of string it must quote.
var quoteSeeds = []string{
	"", "on", "yes", "1.5", "-", "--x", "- x", "a: b", "a #b", "${{ x }}", ".inf", "@x", "`id`", "'", "\"",
	"a\nb", "\t", "~", "0x1F", "+1", ".5", "-.inf", "= x", "<<",
	// Found by issue 14: a non-ASCII character hid ": " and " #" after it; "+_0" read as 0.
	"Renée #bot", "modèle: x", "+_0", "Ͱ:", "é:", "ü #", "-_1", "._5", "1_000", "0o17", "2001-12-14",
	"...", "... x", strings.Repeat("=", 1100), "\x1d" + strings.Repeat("=", 1030), "a\u2028b", "\u00a0x", "x\u0085", "\ufeffx", "null", "NULL", "Null", "<<x",
}

// roundTrips fails unless quote(s) reads back through yaml.v3 as exactly s, a string, as a value,
// a key, a block sequence item and (when the emitter chooses it) a flow sequence item.
func roundTrips(t *testing.T, s string) {
	t.Helper()
	q := quote(s)
	check := func(where, doc string, get func(*yaml.Node) *yaml.Node) {
		t.Helper()
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Fatalf("quote(%q) = %s as %s: not YAML: %v\n%s", s, q, where, err, doc)
		}
		if len(root.Content) != 1 {
			t.Fatalf("quote(%q) = %s as %s: no document\n%s", s, q, where, doc)
		}
		n := get(root.Content[0])
		if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || n.Value != s {
			t.Fatalf("quote(%q) = %s as %s reads back as %#v", s, q, where, n)
		}
	}
	entry := func(i int) func(*yaml.Node) *yaml.Node {
		return func(n *yaml.Node) *yaml.Node {
			if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
				return nil
			}
			if i == 0 {
				return n.Content[0]
			}
			v := n.Content[1]
			if v.Kind == yaml.SequenceNode {
				if len(v.Content) != 1 {
					return nil
				}
				return v.Content[0]
			}
			return v
		}
	}
	check("a value", "k: "+q+"\n", entry(1))
	if len(q) <= 1000 {
		check("a key", q+": v\n", entry(0))
	}
	check("a list item", "k:\n  - "+q+"\n", entry(1))
	if flow, ok := flowSeq(seq{s}); ok {
		check("a flow list item", "k: "+flow+"\n", entry(1))
	}
	// The emitter, end to end: s as a key and a value, at the top, nested, and as the first
	// entry of a mapping in a list (which shares the dash's line).
	// The other keys differ from s.
	kn, kl, kx := "n", "l", "x"
	if s == kn || s == kl || s == kx {
		kn, kl, kx = "n2", "l2", "x2"
	}
	var e emitter
	e.mappingBody(mapping{{key: s, value: s}, {key: kn, value: mapping{{key: s, value: mapping{{key: s, value: s}}}}}, {key: kl, value: seq{mapping{{key: s, value: s}, {key: kx, value: s}}}}}, 0)
	var got map[string]any
	if err := yaml.Unmarshal(e.b.Bytes(), &got); err != nil || len(got) != 3 || got[s] != s {
		t.Fatalf("the emitter wrote %q for %q: %v, %#v", e.b.String(), s, err, got)
	}
	n, _ := got[kn].(map[string]any)
	inner, _ := n[s].(map[string]any)
	l, _ := got[kl].([]any)
	first := map[string]any(nil)
	if len(l) == 1 {
		first, _ = l[0].(map[string]any)
	}
	if inner[s] != s || first[s] != s || first[kx] != s {
		t.Fatalf("the emitter wrote %q for %q, read back as %#v", e.b.String(), s, got)
	}
}

func TestQuoteRoundTrips(t *testing.T) {
	for _, s := range quoteSeeds {
		roundTrips(t, s)
	}
	for s, want := range map[string]string{"Renée #bot": `"Renée #bot"`, "modèle: x": `"modèle: x"`, "+_0": `"+_0"`, "Ͱ:": `"Ͱ:"`, "Renée": "Renée", "a-b_c": "a-b_c"} {
		if got := quote(s); got != want {
			t.Errorf("quote(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestNonASCIIBoxValuesRoundTrip: the defects of issue 14 end to end, a git author with " #"
// and a model with ": " after a non-ASCII letter, read back from the compiled workflow.
func TestNonASCIIBoxValuesRoundTrip(t *testing.T) {
	y := agent("code:propose", dispatchRef) + "policy:\n  box:\n    gh-actions: { model: \"modèle: x\", git: { name: \"Renée #bot\", email: \"r@example.com\" } }\n"
	wf := file(t, compileOK(t, y), WorkflowPath("a"))
	found := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "AUTONOMY_MODEL":
					found[k] = true
					if x != "modèle: x" {
						t.Errorf("AUTONOMY_MODEL = %#v", x)
					}
				case "GIT_AUTHOR_NAME":
					found[k] = true
					if x != "Renée #bot" {
						t.Errorf("GIT_AUTHOR_NAME = %#v", x)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(wf), &doc); err != nil {
		t.Fatalf("workflow does not parse: %v\n%s", err, wf)
	}
	walk(doc)
	if !found["AUTONOMY_MODEL"] || !found["GIT_AUTHOR_NAME"] {
		t.Fatalf("the workflow lacks AUTONOMY_MODEL or GIT_AUTHOR_NAME (%v):\n%s", found, wf)
	}
}

// FuzzQuote: every string the emitter writes reads back through yaml.v3 as itself, a string.
func FuzzQuote(f *testing.F) {
	for _, s := range quoteSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		roundTrips(t, s)
	})
}

func TestIgnoreFiltersIntersect(t *testing.T) {
	wf := file(t, compileOK(t, agent("", `      - { event: push, config: { branches-ignore: [x1, y1] } }
      - { event: push, config: { branches-ignore: [y1, z1] } }
      - { event: pull_request_target, config: { branches-ignore: [a] } }
      - { event: pull_request_target, config: { branches-ignore: [b] } }
`)), WorkflowPath("a"))
	if !strings.Contains(wf, "  push:\n    branches-ignore: [y1]\n") {
		t.Errorf("push: only what both triggers ignore stays ignored:\n%s", wf)
	}
	if !strings.Contains(wf, "  pull_request_target: null\n") {
		t.Errorf("pull_request_target: disjoint ignore lists ignore nothing:\n%s", wf)
	}
}

func TestGates(t *testing.T) {
	out := compileOK(t, agent("", `      - { event: workflow_run, config: { workflows: [ci] } }
      - { event: issues }
      - { event: watch }
`+dispatchRef))
	wf := file(t, out, WorkflowPath("a"))
	for _, want := range []string{
		"(github.event_name != 'workflow_run' || github.event.workflow_run.head_repository.full_name == github.repository)",
		`!contains(fromJSON('["opened","edited","closed","reopened","deleted"]'), github.event.action)`,
		// A dispatch on another branch would read that branch's skill and policy.
		"(github.event_name != 'workflow_dispatch' || github.ref == format('refs/heads/{0}', github.event.repository.default_branch))",
	} {
		if !strings.Contains(wf, want) {
			t.Errorf("workflow lacks %s:\n%s", want, wf)
		}
	}
	if !strings.Contains(out.Warnings.String(), `anyone can fire "watch"`) {
		t.Errorf("no warning for watch:\n%s", out.Warnings)
	}
}

// TestRunStepHardening: the agent is installed before the token is persisted, cannot issue
// workflow commands, and cannot mint more OIDC tokens.
func TestRunStepHardening(t *testing.T) {
	y := agent("code:propose", dispatchRef) + "policy:\n  box:\n    gh-actions: { credential: { oidc: { audience: proxy } } }\n"
	wf := file(t, compileOK(t, y), WorkflowPath("a"))
	install, checkout := strings.Index(wf, "Install the agent"), strings.Index(wf, "Check out the repository")
	if install < 0 || checkout < 0 || install > checkout {
		t.Errorf("the install must come before the checkout:\n%s", wf)
	}
	for _, want := range []string{"id-token: write", `echo "::stop-commands::${stop}"`, `echo "::${stop}::"`, "unset ACTIONS_ID_TOKEN_REQUEST_TOKEN ACTIONS_ID_TOKEN_REQUEST_URL"} {
		if !strings.Contains(wf, want) {
			t.Errorf("workflow lacks %q:\n%s", want, wf)
		}
	}
	if mask, stop := strings.Index(wf, "::add-mask::"), strings.Index(wf, "::stop-commands::"); mask > stop {
		t.Error("the token must be masked before workflow commands stop")
	}
}

// TestBehaviorPathIsData: a behavior path holding an expression reaches env as that text.
func TestBehaviorPathIsData(t *testing.T) {
	dir := profile(t, head+"  a:\n    behavior: \"skills/x${{ github.event.issue.title }}\"\n    triggers: [{ dispatch: true }]\n")
	if err := os.MkdirAll(filepath.Join(dir, "skills/x${{ github.event.issue.title }}"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "skills/x${{ github.event.issue.title }}/SKILL.md"), []byte("# x\n"), 0o644)
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	out, err := Substrate{}.Compile(resolve(p))
	if err != nil {
		t.Fatal(err)
	}
	env, _ := job(t, file(t, out, WorkflowPath("a")), "agent")["env"].(map[string]any)
	if got := env["AUTONOMY_BEHAVIOR"]; got != ".autonomy/skills/x${{ '${{' }} github.event.issue.title }}/SKILL.md" {
		t.Errorf("AUTONOMY_BEHAVIOR = %v", got)
	}
}

// TestResolveHinted: plainSafe skips yaml.v3's resolver for a scalar whose first byte is not in
// resolveHinted; the resolver must agree that every such scalar is a string, whatever follows.
func TestResolveHinted(t *testing.T) {
	for b := 0; b < 256; b++ {
		if strings.IndexByte(resolveHinted, byte(b)) >= 0 {
			continue
		}
		for _, rest := range []string{"", "rue", "ull", "0", ".5", "2001-12-14", "<", "x"} {
			s := string([]byte{byte(b)}) + rest
			if tag := (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).ShortTag(); tag != "!!str" {
				t.Errorf("yaml.v3 resolves %q as %s, but plainSafe would not ask it", s, tag)
			}
		}
	}
}

// A Sunday written 7 is written 0 in the workflow's schedule: GitHub's day of the week is 0-6.
// The workflow is read as YAML, as GitHub reads it.
func TestACronOfSundaySevenIsWrittenZero(t *testing.T) {
	wf := file(t, compileOK(t, agent("", `      - cron: "0 9 * * 7"
      - cron: "0 9 * * 0"
`)), WorkflowPath("a"))
	var doc struct {
		On struct {
			Schedule []struct{ Cron string } `yaml:"schedule"`
		} `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(wf), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.On.Schedule; len(s) != 1 || s[0].Cron != "0 9 * * 0" {
		t.Errorf("schedule %+v, want the one cron 0 9 * * 0", s)
	}
}
