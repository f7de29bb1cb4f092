package ghactions

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates"
)

// dispatchInputNames parses a workflow and returns its workflow_dispatch inputs; ok is false
// when it has no workflow_dispatch trigger.
func dispatchInputNames(t *testing.T, wf string) (names []string, ok bool) {
	t.Helper()
	var doc struct {
		On map[string]yaml.Node `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(wf), &doc); err != nil {
		t.Fatalf("workflow does not parse: %v\n%s", err, wf)
	}
	n, ok := doc.On["workflow_dispatch"]
	if !ok {
		return nil, false
	}
	var d struct {
		Inputs yaml.Node `yaml:"inputs"`
	}
	if err := n.Decode(&d); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(d.Inputs.Content); i += 2 {
		names = append(names, d.Inputs.Content[i].Value)
	}
	return names, true
}

// manifestDispatch reads the installed manifest and returns the dispatch inputs it records for
// the actor, as autonomy gh apply reads them; ok is false when it records no dispatch trigger.
func manifestDispatch(t *testing.T, out substrates.Output, actor string) (params []string, ok bool) {
	t.Helper()
	var m struct {
		Actors []struct {
			Name     string `json:"name"`
			Triggers []struct {
				Kind   string   `json:"kind"`
				Params []string `json:"params"`
			} `json:"triggers"`
		} `json:"actors"`
	}
	if err := json.Unmarshal([]byte(file(t, out, ManifestPath)), &m); err != nil {
		t.Fatal(err)
	}
	for _, a := range m.Actors {
		if a.Name != actor {
			continue
		}
		for _, tr := range a.Triggers {
			if tr.Kind == "dispatch" {
				return tr.Params, true
			}
		}
	}
	return nil, false
}

// TestLaunchTargetsAreDispatchable: an actor another may launch (a scoped agent:launch naming it,
// or an unscoped one) is compiled with a workflow_dispatch trigger whose inputs are its params,
// and the manifest the apply job reads records it; an actor nobody may launch gets none.
func TestLaunchTargetsAreDispatchable(t *testing.T) {
	y := head + `  pm:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch@develop]
    triggers:
      - cron: "*/30 * * * *"
  develop:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - event: issue_comment
        params: { ISSUE: subject.ref, BODY: subject.text }
      - event: issues
        config: { types: [labeled] }
        params: { ISSUE: subject.ref, WHY: trigger.kind }
  lonely:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - cron: "0 9 * * 1"
`
	out := compileOK(t, y)
	got, ok := dispatchInputNames(t, file(t, out, WorkflowPath("develop")))
	if !ok {
		t.Fatal("develop, which pm may launch, has no workflow_dispatch trigger")
	}
	if want := "ISSUE BODY WHY " + correlationInput; strings.Join(got, " ") != want {
		t.Errorf("develop's dispatch inputs: got %v, want %s", got, want)
	}
	if params, ok := manifestDispatch(t, out, "develop"); !ok || strings.Join(params, " ") != "ISSUE BODY WHY" {
		t.Errorf("the manifest's dispatch trigger of develop: got %v (%v), want ISSUE BODY WHY", params, ok)
	}
	for _, name := range []string{"pm", "lonely"} {
		if _, ok := dispatchInputNames(t, file(t, out, WorkflowPath(name))); ok {
			t.Errorf("%s, which no actor may launch, got a workflow_dispatch trigger", name)
		}
	}
	// A dispatched run reads its skill from the default branch only, as a declared dispatch does.
	cond, _ := job(t, file(t, out, WorkflowPath("develop")), "agent")["if"].(string)
	ctx := map[string]any{"vars.AUTONOMY_PAUSED": "", "github.event_name": "workflow_dispatch", "github.ref": "refs/heads/evil", "github.event.repository.default_branch": "main"}
	if evalExpr(t, cond, ctx) != "false" {
		t.Errorf("a dispatch of develop on another branch runs: %s", cond)
	}

	// An unscoped agent:launch makes every actor a target.
	out = compileOK(t, strings.Replace(y, "agent:launch@develop", "agent:launch", 1))
	for _, name := range []string{"pm", "develop", "lonely"} {
		if _, ok := dispatchInputNames(t, file(t, out, WorkflowPath(name))); !ok {
			t.Errorf("%s has no workflow_dispatch trigger, though pm may launch any actor", name)
		}
	}
}

// TestLaunchThatCannotLand: an actor holding agent:launch whose job can neither apply a launch
// (a script runs no MCP server) nor call the runner (a scoped grant gets no token) is reported,
// at its capabilities; one whose job can is not.
func TestLaunchThatCannotLand(t *testing.T) {
	y := head + `  kick:
    behavior: scripts/run.sh
    capabilities: [agent:launch@a]
    triggers:
      - cron: "0 9 * * 1"
  a:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch@kick]
    triggers:
      - cron: "0 9 * * 1"
`
	out := compileOK(t, y)
	var hits []string
	for _, w := range out.Warnings {
		if strings.Contains(w.Message, "can never land") {
			hits = append(hits, w.Message)
			if w.Pos.Line != 6 {
				t.Errorf("warning at line %d, want 6 (kick's capabilities): %s", w.Pos.Line, w.Message)
			}
		}
	}
	if len(hits) != 1 || !strings.Contains(hits[0], `"kick"`) {
		t.Errorf("want one warning about kick's launches, got %q", hits)
	}
}

// TestDispatchCannotForgeWhoOrRole: a dispatch input bound to subject.actor or subject.actorRole
// does not set the param: the run resolves who dispatched from github.actor (the launching actor
// when our apply job dispatched, as the bot) and the role from who that is, whatever was sent.
// It holds for a declared dispatch and for the one a launch target is given.
func TestDispatchCannotForgeWhoOrRole(t *testing.T) {
	declared := agent("tasks:converse", "      - { dispatch: true, params: { WHO: subject.actor, ROLE: subject.actorRole } }\n")
	launched := head + `  pm:
    behavior: skills/a
    capabilities: [agent:launch]
    triggers:
      - cron: "*/30 * * * *"
  a:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - event: issue_comment
        params: { WHO: subject.actor, ROLE: subject.actorRole }
`
	cases := []struct {
		actor, owner, who, role string
	}{
		{"mallory", "acme", "mallory", "COLLABORATOR"}, // a writer forging OWNER
		{"acme", "acme", "acme", "OWNER"},              // the repository's owner
		{"github-actions[bot]", "acme", "pm", "NONE"},  // our apply job, sending the launching actor
		{"renovate[bot]", "acme", "renovate[bot]", "NONE"},
	}
	for name, y := range map[string]string{"declared": declared, "launched": launched} {
		env, _ := job(t, file(t, compileOK(t, y), WorkflowPath("a")), "agent")["env"].(map[string]any)
		for _, c := range cases {
			ctx := map[string]any{"github.event_name": "workflow_dispatch", "github.actor": c.actor, "github.repository_owner": c.owner,
				"inputs.WHO": "pm", "inputs.ROLE": "OWNER"}
			if c.actor != "github-actions[bot]" {
				ctx["inputs.WHO"] = "root"
			}
			who, _ := env["WHO"].(string)
			role, _ := env["ROLE"].(string)
			if got := evalExpr(t, who, ctx); got != c.who {
				t.Errorf("%s, dispatched by %s: WHO = %q, want %q (%s)", name, c.actor, got, c.who, who)
			}
			if got := evalExpr(t, role, ctx); got != c.role {
				t.Errorf("%s, dispatched by %s with ROLE=OWNER: ROLE = %q, want %q (%s)", name, c.actor, got, c.role, role)
			}
		}
	}
}
