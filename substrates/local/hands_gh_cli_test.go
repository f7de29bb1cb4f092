//go:build unix

package local

import (
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/ir"
)

// TestSkillShellGhLandsAsTheTool: a reference-style skill run by the real pinned codex (against
// the scripted model) runs gh in its shell. On codeHost github its gh issue comment lands on
// GitHub exactly as the comment tool's would (applied by the runner with its own token); its gh
// issue edit --add-label outside its capabilities (no tasks:author), a gh pr merge the shim does
// not map and a read with no read token are refused, naming what to use, and nothing of them
// lands. The shell's environment holds no token, and neither does anything the session left.
func TestSkillShellGhLandsAsTheTool(t *testing.T) {
	gh, issue := newIssueFake(t)
	fake := modelfake.Start(
		modelfake.Turn{Shell: "gh issue comment 1 --body 'Triaged from the shell.' 2>&1; echo rc=$?"},
		modelfake.Turn{Shell: "gh issue edit 1 --add-label ready 2>&1; echo rc=$?; gh pr merge 1 2>&1; echo rc=$?; gh issue view 1 2>&1; echo rc=$?"},
		modelfake.Turn{Shell: "env; echo env-listed"},
		submitDone("Handed the work on from the shell."),
		modelfake.Turn{Text: "Done."})
	defer fake.Close()
	f := handsFleet("codex")
	f.yml = strings.Replace(f.yml, "targets: [local]\n", "targets: [local]\ncodeHost: github\n", 1)
	f.files["skills/lead/SKILL.md"] = "# lead\nTriage issue 1: comment on it with `gh issue comment 1 --body ...` and mark it ready with `gh issue edit 1 --add-label ready`.\n"
	dir := installFleet(t, f, true)
	env := append(cliEnv(t, "codex", fake), "GH_TOKEN="+ghSecret, "GITHUB_API_URL="+gh.URL, "GITHUB_REPOSITORY=acme/app")
	r := newRunner(t, dir, Options{Env: env, Exe: builtAutonomy(t)})
	s := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEndedWithin(t, r, s.ID, 150); got.Status != ir.Done || fake.Err() != nil {
		t.Fatalf("ended %s (%s); model: %v\n%s", got.Status, got.Reason, fake.Err(), sessionLogOf(r, s.ID))
	}
	r.Wait()
	outputs := toolOutputs(fake)
	if len(outputs) < 3 {
		t.Fatalf("the model read %d tool outputs:\n%s", len(outputs), strings.Join(outputs, "\n"))
	}
	if !strings.Contains(outputs[0], "commented on #1") || !strings.Contains(outputs[0], "rc=0") {
		t.Errorf("the shell's gh issue comment:\n%s", outputs[0])
	}
	for _, want := range []string{`needs the capability tasks:author`, "pr merge: refused", "the propose tool", "holds no GitHub token to read with"} {
		if !strings.Contains(outputs[1], want) {
			t.Errorf("the shell never read %q:\n%s", want, outputs[1])
		}
	}
	if strings.Count(outputs[1], "rc=1") != 3 {
		t.Errorf("the refused commands' exit codes:\n%s", outputs[1])
	}
	if !strings.Contains(outputs[2], "env-listed") || !strings.Contains(outputs[2], "PATH=") {
		t.Fatalf("the shell's env was not listed:\n%s", outputs[2])
	}
	for i, out := range outputs {
		if strings.Contains(out, ghSecret) {
			t.Errorf("tool output %d holds the runner's token:\n%s", i, out)
		}
	}
	is, _ := gh.Issue(issue)
	if !slices.Equal(is.Comments, []string{"Triaged from the shell."}) || len(is.Labels) != 0 {
		t.Errorf("issue #1: comments %q, labels %q; want the shell's comment and no label", is.Comments, is.Labels)
	}
	assertNoSecret(t, dir, ghSecret, false)
}
