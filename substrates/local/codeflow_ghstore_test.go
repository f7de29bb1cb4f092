//go:build unix

package local

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
)

// overwriteLoose replaces the loose object id of the repository at dir with a blob of content
// under the same name, as a session writing the git directory can: git does not re-hash an
// object it reads, so the repository then shows content for id that is not id's.
func overwriteLoose(t *testing.T, dir, id, content string) {
	t.Helper()
	objects := gitRun(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	loose := filepath.Join(objects, id[:2], id[2:])
	if _, err := os.Stat(loose); err != nil {
		t.Fatalf("the blob %s is not a loose object: %v", id, err)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	fmt.Fprintf(w, "blob %d\x00%s", len(content), content)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(loose, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// askDiff is the command the maintainer's ask names to read what the merge lands ("git … diff
// OLD MERGED"), as its arguments.
func (g *ghFlowRig) askDiff(ask string) []string {
	g.t.Helper()
	evs, err := g.r.Store.Events(context.Background(), ask, 0)
	if err != nil {
		g.t.Fatal(err)
	}
	for _, e := range evs {
		const lead = "What its merge lands there: git "
		if i := strings.Index(e.Message, lead); e.Kind == "proposal" && i >= 0 {
			cmd, _, _ := strings.Cut(e.Message[i+len(lead):], " (")
			return strings.Fields(cmd)
		}
	}
	g.t.Fatalf("the ask's text names no diff of what lands: %+v", evs)
	return nil
}

// askedForVision runs develop on work item 42, writing content to the human-required
// docs/VISION.md, and returns its proposal once it waits for the maintainer's ask, with its pull
// request.
func (g *ghFlowRig) askedForVision(content string) (store.Proposal, int) {
	g.t.Helper()
	p := g.proposeUntil("42", "docs/VISION.md", content, "approve", func(p store.Proposal) bool {
		return p.State == store.ProposalRefused || p.Ask != "" || strings.Contains(p.Reason, "auto-merge armed")
	})
	n := g.pullOfBranch("autonomy/develop/42")
	if p.Ask == "" || g.gh.AutoMerge(n) {
		g.t.Fatalf("a proposal of docs/VISION.md: want the maintainer's ask, got ask %q armed %v: %s: %s", p.Ask, g.gh.AutoMerge(n), p.State, p.Reason)
	}
	return p, n
}

// TestGitHubGateReadsGitHubsObjects: on codeHost github, after the head is pushed, a session
// overwrites the loose object of the human-required docs/VISION.md's new blob in the
// repository's store with harmless text, which the repository's git diff then shows. The
// proposal still waits for the maintainer, and the diff the ask names shows the real content,
// as GitHub merges it: the gate reads the runner's own store, fetched from GitHub.
func TestGitHubGateReadsGitHubsObjects(t *testing.T) {
	g := newGHFlowRig(t)
	p, n := g.askedForVision("the agent's REAL vision")
	blob := gitRun(t, g.dir, "rev-parse", p.Head+":docs/VISION.md")
	overwriteLoose(t, g.dir, blob, "a harmless note\n")
	if got := gitRun(t, g.dir, "show", p.Head+":docs/VISION.md"); !strings.Contains(got, "harmless") {
		t.Fatalf("the repository still shows %q: the overwrite did not take", got)
	}
	args := g.askDiff(p.Ask)
	out, err := exec.Command("git", append(append([]string{"-C", g.dir}, args...), "--", "docs/VISION.md")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "+the agent's REAL vision") || strings.Contains(string(out), "harmless") {
		t.Errorf("git %s shows the repository's overwritten object, not what GitHub merges (%v):\n%s", strings.Join(args, " "), err, out)
	}
	// Approved with the real content read, it is armed; what is armed is what GitHub has.
	g.approveAsk(p.Ask)
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); !g.gh.AutoMerge(n) {
		t.Errorf("approved by the maintainer: not armed: %s: %s", p.State, p.Reason)
	}
}

// TestGitHubStoreIsTheRunners: the runner's store of GitHub's objects is made 0700 where it is
// absent, and a symbolic link there is refused, never followed.
func TestGitHubStoreIsTheRunners(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "state", "git", "github.git")
	if err := ghStore(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the store: %v, mode %v", err, fi.Mode())
	}
	if got := gitRun(t, dir, "rev-parse", "--is-bare-repository"); got != "true" {
		t.Errorf("the store is no bare repository: %q", got)
	}
	if err := ghStore(dir); err != nil {
		t.Errorf("opened again: %v", err)
	}
	link := filepath.Join(root, "link.git")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := ghStore(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symbolic link as the store: %v", err)
	}
}

// TestGitHubGateWaitsWithoutGitHubsObjects: when the runner's store of GitHub's objects cannot
// be read (a symbolic link to the repository's git directory planted where it is), an approved
// proposal waits, saying so, and nothing is armed: the gate never reads the repository's objects
// instead.
func TestGitHubGateWaitsWithoutGitHubsObjects(t *testing.T) {
	g := newGHFlowRig(t)
	p, n := g.askedForVision("the agent's vision")
	st := filepath.Join(g.dir, filepath.FromSlash(ghStorePath))
	if err := os.RemoveAll(st); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(g.dir, ".git"), st); err != nil {
		t.Fatal(err)
	}
	g.approveAsk(p.Ask)
	ctx := context.Background()
	g.r.advanceProposals(ctx)
	if p, _, _ = g.r.Store.Proposal(ctx, p.Seq); g.gh.AutoMerge(n) || p.State != store.ProposalApproved || !strings.Contains(p.Reason, "symbolic link") {
		t.Errorf("the runner's store a symbolic link: armed %v: %s: %s", g.gh.AutoMerge(n), p.State, p.Reason)
	}
}
