//go:build unix

package local

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// proposeFleet is a develop run by the real pinned codex in an isolated workspace, holding
// code:propose, whose reviewer (a script) approves the head it is launched on.
var proposeFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  develop:
    behavior: skills/develop
    capabilities: [code:propose]
    review: reviewer
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
  reviewer:
    behavior: scripts/review.sh
    capabilities: [code:review]
    result: { schema: autonomy.review.v1 }
    triggers: [{ dispatch: true }]
policy:
  box:
    local: { agent: codex, model: gpt-5.5 }
`, files: map[string]string{
	"skills/develop/SKILL.md": "# develop\nFix the greeting and propose it with your tools.\n",
	"scripts/review.sh": `#!/bin/sh
set -e
printf '{"verdict":"approve","summary":"looked","headSha":"%s"}\n' "$(git rev-parse HEAD)" > "$AUTONOMY_RESULT"
`,
}}

// TestProposeToolEntersTheCodeFlow: the real pinned codex commits in its worktree and calls the
// propose tool; the proposal it records (with the title and body it gave) is the one the runner's
// code flow completes at the session's end, has reviewed, and merges into main.
func TestProposeToolEntersTheCodeFlow(t *testing.T) {
	fake := modelfake.Start(
		modelfake.Turn{Shell: "echo hello > greeting.txt && git add greeting.txt && git -c user.name=develop -c user.email=d@example.com commit -q -m 'wip'"},
		modelfake.Turn{Tool: "propose", Args: json.RawMessage(`{"title":"Fix the greeting","body":"Says hello now."}`)},
		submitDone("Proposed the greeting."),
		modelfake.Turn{Text: "Proposed."})
	defer fake.Close()
	dir := installFleet(t, proposeFleet, true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install the fleet")
	r := newRunner(t, dir, Options{Env: cliEnv(t, "codex", fake), Exe: builtAutonomy(t)})
	s := launch(t, r, LaunchRequest{Actor: "develop"})
	if got := waitEndedWithin(t, r, s.ID, 150); got.Status != ir.Done || fake.Err() != nil {
		t.Fatalf("develop ended %s (%s); model: %v\n%s", got.Status, got.Reason, fake.Err(), sessionLogOf(r, s.ID))
	}
	p := waitProposal(t, r, func(p store.Proposal) bool {
		return p.State == store.ProposalMerged || p.State == store.ProposalRefused
	})
	r.Wait()
	if p.Session != s.ID || p.State != store.ProposalMerged || p.Title != "Fix the greeting" || p.Body != "Says hello now." {
		t.Fatalf("the proposal: %+v, want develop's, merged, with the tool's title and body\n%s", p, sessionLogOf(r, s.ID))
	}
	if main := gitRun(t, dir, "rev-parse", "main"); main != p.Head || readFile(t, filepath.Join(dir, "greeting.txt")) != "hello\n" {
		t.Fatalf("main is %s, want the proposal's head %s with the greeting", main, p.Head)
	}
}
