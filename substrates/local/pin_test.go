//go:build unix

package local

import (
	"context"
	"strings"
	"testing"
)

// TestTargetAndRepositoryArePinned: what the code flow reads from files a session can write
// while it runs (the root's checked-out branch as the target, the origin remote as the GitHub
// repository) is what the installation first read: a session that moves the root's HEAD to
// another branch, or points origin at another repository, gets an error naming the setting that
// fixes it, not proposals merged into that branch or pushed to that repository.
func TestTargetAndRepositoryArePinned(t *testing.T) {
	g := newFlowRig(t)
	ctx := context.Background()
	if b, err := g.r.targetBranch(ctx, g.dir); err != nil || b != "main" {
		t.Fatalf("targetBranch = %q, %v; want main", b, err)
	}
	gitRun(t, g.dir, "symbolic-ref", "HEAD", "refs/heads/gh-pages")
	if b, err := g.r.targetBranch(ctx, g.dir); err == nil || !strings.Contains(err.Error(), "now names gh-pages, but this installation has used main") || !strings.Contains(err.Error(), "policy.box.local.targetBranch") {
		t.Errorf("after a session moved HEAD: targetBranch = %q, %v; want refused naming policy.box.local.targetBranch", b, err)
	}
	gitRun(t, g.dir, "symbolic-ref", "HEAD", "refs/heads/main")
	gitRun(t, g.dir, "remote", "add", "origin", "https://github.com/acme/app.git")
	if o, n, err := g.r.githubRepo("", ""); err != nil || o+"/"+n != "acme/app" {
		t.Fatalf("githubRepo = %s/%s, %v; want acme/app", o, n, err)
	}
	gitRun(t, g.dir, "remote", "set-url", "origin", "https://github.com/victim/other.git")
	if _, _, err := g.r.githubRepo("", ""); err == nil || !strings.Contains(err.Error(), "now names victim/other, but this installation has used acme/app") {
		t.Errorf("after a session repointed origin: %v; want refused", err)
	}
	// A repository named for good is taken as named.
	if o, n, err := g.r.githubRepo("victim/other", ""); err != nil || o+"/"+n != "victim/other" {
		t.Errorf("githubRepo(events.repo) = %s/%s, %v", o, n, err)
	}
}
