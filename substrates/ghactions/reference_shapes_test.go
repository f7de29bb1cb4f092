package ghactions

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// referenceShapes re-create, in our own words, the launch shapes of the reference
// implementation's seven profiles: who holds agent:launch, scoped or not, and which triggers
// each launched actor declares. The reference adds workflow_dispatch to every actor; these
// declare only what its profiles declare, so a target with no dispatch of its own is one the
// compiler must make dispatchable. Each edge is [launcher, target].
var referenceShapes = []struct {
	name, actors string
	edges        [][2]string
}{
	{"hello", `  greeter:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - cron: "0 8 * * *"
`, nil},
	{"hello-human", `  requester:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch@approver]
    triggers:
      - cron: "0 8 * * *"
  approver:
    kind: human
    behavior: humans/h
    capabilities: [tasks:converse]
    triggers:
      - dispatch: true
        params: { ITEM: subject.ref, ASK: subject.text }
`, [][2]string{{"requester", "approver"}}},
	{"simple-gh", `  triage:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch@fixer]
    triggers:
      - event: issues
        config: { types: [opened] }
        params: { ISSUE: subject.ref }
  fixer:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - event: issue_comment
        params: { ISSUE: subject.ref, TEXT: subject.text }
`, [][2]string{{"triage", "fixer"}}},
	{"simple-sdlc", `  pm:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch, agent:list]
    triggers:
      - cron: "*/15 * * * *"
  draft:
    behavior: skills/a
    capabilities: [tasks:author, tasks:converse]
    triggers:
      - { dispatch: true, params: { ITEM: subject.ref } }
  develop:
    behavior: skills/a
    capabilities: [code:propose, tasks:converse]
    triggers:
      - { dispatch: true, params: { ITEM: subject.ref } }
  review:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - { dispatch: true, params: { ITEM: subject.ref } }
  audit:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - { dispatch: true, params: { ON: subject.ref } }
      - cron: "51 9 * * 0"
`, [][2]string{{"pm", "draft"}, {"pm", "develop"}, {"pm", "review"}, {"pm", "audit"}}},
	{"simple-gh-sdlc", `  pm:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch, agent:list]
    triggers:
      - cron: "*/15 * * * *"
  draft:
    behavior: skills/a
    capabilities: [tasks:author, tasks:converse]
    triggers:
      - { dispatch: true, params: { ITEM: subject.ref } }
  develop:
    behavior: skills/a
    capabilities: [code:propose, tasks:converse]
    review: reviewer
    triggers:
      - { dispatch: true, params: { ITEM: subject.ref } }
  reviewer:
    behavior: skills/a
    capabilities: [code:review, tasks:converse]
    triggers:
      - event: issue_comment
        params: { REF: subject.ref, TEXT: subject.text, ROLE: subject.actorRole }
      - event: pull_request_target
        config: { types: [opened, synchronize] }
`, [][2]string{{"pm", "draft"}, {"pm", "develop"}, {"pm", "reviewer"}}},
	{"self-driving", `  pm:
    behavior: skills/a
    capabilities: [tasks:converse, tasks:author, agent:launch]
    triggers:
      - cron: "*/30 * * * *"
  develop:
    behavior: skills/a
    capabilities: [code:propose, tasks:converse]
    review: reviewer
    triggers:
      - event: issue_comment
        params: { ISSUE: subject.ref, TEXT: subject.text }
  reviewer:
    behavior: skills/a
    capabilities: [code:review, tasks:converse]
    triggers:
      - event: pull_request_target
        config: { types: [opened, synchronize, reopened] }
        params: { PR: subject.ref }
  strategist:
    behavior: skills/a
    capabilities: [tasks:author, agent:launch@develop]
    triggers:
      - cron: "23 7 * * 1"
`, [][2]string{{"pm", "develop"}, {"pm", "reviewer"}, {"pm", "strategist"}, {"strategist", "develop"}}},
	{"soc2-baseline", `  pm:
    behavior: skills/a
    capabilities: [tasks:converse, agent:launch, agent:list]
    triggers:
      - cron: "*/15 * * * *"
  develop:
    behavior: skills/a
    capabilities: [code:propose, tasks:converse]
    review: reviewer
    triggers:
      - { dispatch: true, params: { ITEM: subject.ref } }
  reviewer:
    behavior: skills/a
    capabilities: [code:review, tasks:converse]
    triggers:
      - event: pull_request_target
        config: { types: [opened, synchronize] }
  compliance-drafter:
    behavior: skills/a
    capabilities: [code:propose, tasks:converse]
    review: reviewer
    triggers:
      - event: issues
        config: { types: [labeled] }
        params: { REF: subject.ref }
  compliance-verifier:
    behavior: skills/a
    capabilities: [code:review, tasks:converse]
    triggers:
      - event: pull_request_target
        config: { types: [opened, synchronize] }
`, [][2]string{{"pm", "develop"}, {"pm", "reviewer"}, {"pm", "compliance-drafter"}, {"pm", "compliance-verifier"}}},
}

// TestReferenceShapesLaunchEveryEdge: each shape validates and compiles for gh-actions, and every
// launch edge lands: the launcher's apply job, reading the installed manifest, dispatches the
// target's workflow on a fake GitHub that refuses a workflow with no workflow_dispatch trigger,
// as GitHub does.
func TestReferenceShapesLaunchEveryEdge(t *testing.T) {
	for _, shape := range referenceShapes {
		t.Run(shape.name, func(t *testing.T) {
			out := compileOK(t, head+shape.actors)
			m, err := effect.ReadInstalled([]byte(file(t, out, ManifestPath)))
			if err != nil {
				t.Fatal(err)
			}
			wfs, err := ghfake.WorkflowsFromOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := ghfake.New(ghfake.Options{Token: "tok", Workflows: wfs})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			client := github.NewClient(srv.Client()).WithAuthToken("tok")
			client.BaseURL, _ = url.Parse(srv.URL)
			for i, edge := range shape.edges {
				e := &effect.Env{Client: client, Owner: "o", Repo: "r", Actor: edge[0], Out: &strings.Builder{}}
				line := `{"tool":"launch","actor":"` + edge[0] + `","session":"7","input":{"actor":"` + edge[1] + `","subject":"12"}}` + "\n"
				res, err := e.Apply(context.Background(), effect.ApplyOptions{Installed: m, Actor: edge[0], Session: "7", Outputs: strings.NewReader(line)})
				if err != nil {
					t.Fatalf("%s launches %s: %v", edge[0], edge[1], err)
				}
				if len(res) != 1 || res[0].Refused != "" {
					t.Errorf("%s launches %s: refused: %+v", edge[0], edge[1], res)
				}
				runs := srv.Runs()
				if len(runs) != i+1 || runs[i].Workflow != edge[1]+".yml" {
					t.Errorf("%s launches %s: runs %+v", edge[0], edge[1], runs)
				}
			}
		})
	}
}
