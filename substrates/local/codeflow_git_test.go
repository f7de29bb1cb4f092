//go:build unix

package local

import (
	"maps"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

// TestReplaceRefDoesNotHideAWorkflow: a replace ref the proposer plants in the shared git
// directory would make every check read an innocent commit while the branch points at one that
// changes .github/workflows; the runner's git reads the real objects, so main gets no workflow:
// the worktree, whose index the agent's git reset to the replacement, differs from the real
// commit and is kept (nothing is proposed), or the proposal is refused.
func TestReplaceRefDoesNotHideAWorkflow(t *testing.T) {
	f := flowFleet
	f.files = maps.Clone(flowFleet.files)
	f.files["scripts/develop.sh"] = `#!/bin/sh
set -e
export GIT_AUTHOR_NAME=develop GIT_AUTHOR_EMAIL=d@example.com GIT_COMMITTER_NAME=develop GIT_COMMITTER_EMAIL=d@example.com
mkdir -p src .github/workflows
echo ok > src/ok.txt
git add src/ok.txt
git commit -qm "Innocent change"
I=$(git rev-parse HEAD)
echo 'on: push' > .github/workflows/evil.yml
git add -A
git commit -q --amend -m "Innocent change"
E=$(git rev-parse HEAD)
git replace "$E" "$I"
git reset -q --hard
` + scriptDone
	dir := installFleet(t, f, true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install")
	g := &flowRig{t: t, dir: dir, r: newRunner(t, dir, Options{})}
	g.set("change", "x\nx\n")
	g.set("verdict", "approve\n")
	sess := launch(t, g.r, LaunchRequest{Actor: "develop", Ref: "42"})
	if s := waitEnded(t, g.r, sess.ID); s.Status != "done" {
		t.Fatalf("the proposer ended %s: %s\n%s", s.Status, s.Reason, sessionLogOf(g.r, sess.ID))
	}
	// The code flow's part of the end runs after it; running it here again (it is idempotent)
	// makes sure it has run.
	g.r.afterEnd(t.Context(), sess.ID)
	if _, ok, err := g.r.Store.ProposalOf(t.Context(), sess.ID); err != nil {
		t.Fatal(err)
	} else if ok {
		// Read with the real objects, the commit changes a workflow: refused.
		if p := g.settled(sess.ID); p.State != store.ProposalRefused || !strings.Contains(p.Reason, "workflows") {
			t.Errorf("proposal %s: %s; want refused for changing workflows", p.State, p.Reason)
		}
	}
	if main := gitRun(t, dir, "--no-replace-objects", "ls-tree", "-r", "--name-only", "main"); strings.Contains(main, "evil.yml") {
		t.Errorf("a workflow landed on main:\n%s", main)
	}
}

// TestReplaceRefDoesNotFoolTheReviewer: the proposer commits a change within its scope and
// plants a replace ref showing an innocent commit in its place; the reviewer's git reads the
// real commit (every session's git honors no replace ref), sees the change and rejects it.
func TestReplaceRefDoesNotFoolTheReviewer(t *testing.T) {
	f := flowFleet
	f.files = maps.Clone(flowFleet.files)
	f.files["scripts/develop.sh"] = `#!/bin/sh
set -e
export GIT_AUTHOR_NAME=develop GIT_AUTHOR_EMAIL=d@example.com GIT_COMMITTER_NAME=develop GIT_COMMITTER_EMAIL=d@example.com
mkdir -p src
echo fine > src/a.txt
git add src/a.txt
git commit -qm "A change"
I=$(git rev-parse HEAD)
echo evil > src/a.txt
git commit -q -a --amend -m "A change"
git --no-replace-objects replace "$(git --no-replace-objects rev-parse HEAD)" "$I"
` + scriptDone
	f.files["scripts/review.sh"] = `#!/bin/sh
set -e
v=approve
git show HEAD:src/a.txt | grep -q evil && v=request-changes
printf '{"verdict":"%s","summary":"looked","headSha":"%s"}\n' "$v" "$(git rev-parse HEAD)" > "$AUTONOMY_RESULT"
`
	dir := installFleet(t, f, true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install")
	g := &flowRig{t: t, dir: dir, r: newRunner(t, dir, Options{})}
	sess := launch(t, g.r, LaunchRequest{Actor: "develop", Ref: "42"})
	if s := waitEnded(t, g.r, sess.ID); s.Status != "done" {
		t.Fatalf("the proposer ended %s: %s\n%s", s.Status, s.Reason, sessionLogOf(g.r, sess.ID))
	}
	if p := g.settled(sess.ID); p.State != store.ProposalRefused || !strings.Contains(p.Reason, "request-changes") {
		t.Errorf("proposal %s: %s; want refused by the reviewer", p.State, p.Reason)
	}
	if main := gitRun(t, dir, "--no-replace-objects", "ls-tree", "-r", "--name-only", "main"); strings.Contains(main, "src/a.txt") {
		t.Error("the change the reviewer was not shown landed on main")
	}
}
