package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/mergecheck"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// On codeHost github, what a proposal is checked against is the target as GitHub has it, never
// the local target branch: a session's sandbox writes the repository's git directory, so it can
// move the local branch (git update-ref refs/heads/main) onto commits of its own that GitHub's
// target lacks; checked from there, those commits would go unchecked into the pull request.

// maxCompareFiles is the most files GitHub's compare lists
// (docs.github.com/rest/commits/commits#compare-two-commits): a comparison of more is not vetted
// whole, so a person approves it.
const maxCompareFiles = 300

// baseRef is the runner's own ref in its store (codeflow_ghstore.go) that GitHub's target is
// fetched into, and fetched again before every check.
func baseRef(target string) string { return "refs/autonomy/github/" + target }

// targetBase is the commit the proposal's checks take the target to be: on local-git the target
// branch; on codeHost github the target's commit as GitHub's API names it, fetched with its
// history from the remote (fetchTarget): a 404 refuses the proposal once the repository itself
// reads (GitHub answers 404 for a repository the token cannot see too); an approved proposal whose head GitHub's target already
// holds is settled as GitHub merged it instead (mergeOnGitHub). False when it refused the
// proposal, settled it, or left it waiting (tick retries), saying why.
func (f *flow) targetBase(ctx context.Context) (string, bool) {
	if !f.r.onGitHub() {
		old, err := gitws.Git(ctx, f.repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+f.p.Target+"^{commit}")
		if err != nil {
			f.refuse(ctx, fmt.Sprintf("the target branch %s does not exist", f.p.Target), nil)
			return "", false
		}
		return old, true
	}
	gh, err := f.github(ctx)
	if err == nil {
		var sha string
		if sha, err = f.fetchTarget(ctx, gh); err == nil {
			if _, in := gitws.Git(ctx, f.dir(), "merge-base", "--is-ancestor", f.p.Head, sha); in == nil && f.p.State == store.ProposalApproved {
				f.mergeOnGitHub(ctx) // GitHub merged it (a merge commit, a rebase): nothing is left to check
				return "", false
			}
			return sha, true
		}
	}
	if errors.Is(err, errNoTarget) {
		// GitHub answers 404 for a repository the token cannot see, too: only a repository it
		// reads confirms the branch is missing.
		if _, _, rerr := gh.client.Repositories.Get(ctx, gh.owner, gh.name); rerr != nil {
			f.wait(ctx, fmt.Sprintf("not checked: GitHub answers the target branch %s not found, and the repository %s/%s cannot be read with the runner's token (does it see the repository? tick retries): %v", f.p.Target, gh.owner, gh.name, rerr))
			return "", false
		}
		f.refuse(ctx, fmt.Sprintf("the target branch %s does not exist on GitHub", f.p.Target), nil)
	} else {
		f.wait(ctx, fmt.Sprintf("not checked: %s as GitHub has it cannot be read (tick retries): %v", f.p.Target, err))
	}
	return "", false
}

// errNoTarget is GitHub's 404 for the target branch.
var errNoTarget = errors.New("no such branch on GitHub")

// fetchTarget fetches the proposal's target from GitHub into the runner's store (openStore),
// never the repository's objects, whose directories a session can point anywhere (a symbolic
// link at objects/pack would take the runner's pack wherever it names): before the push (the
// proposal's checks), the head is read from the repository, as an alternate of the store's
// objects (f.alt), which nothing writes; at the gate, the head was fetched there too
// (readFromGitHub).
func (f *flow) fetchTarget(ctx context.Context, gh *ghCode) (string, error) {
	dir, err := f.openStore(ctx)
	if err != nil {
		return "", fmt.Errorf("the runner's store of GitHub's objects cannot be opened: %v", err)
	}
	if f.gdir == "" {
		common, err := gitws.CommonDir(ctx, f.repo)
		if err != nil {
			return "", err
		}
		f.gdir, f.alt = dir, filepath.Join(common, "objects")
	}
	return gh.fetchTarget(ctx, dir, f.p.Target)
}

// fetchTarget is target's commit on GitHub, read through the API with the runner's token, once
// it is in the runner's store at dir: fetched with its history from GitHub into baseRef, as push
// pushes (reading no configuration of the repository's), what the store's baseRef holds offered
// as held.
func (gh *ghCode) fetchTarget(ctx context.Context, dir, target string) (string, error) {
	ref, resp, err := gh.client.Git.GetRef(ctx, gh.owner, gh.name, "heads/"+target)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return "", errNoTarget
	}
	if err != nil {
		return "", err
	}
	sha := ref.GetObject().GetSHA()
	_, out, err := gitws.Fetch(ctx, dir, gh.git(), "refs/heads/"+target, baseRef(target), baseRef(target))
	if err != nil {
		return "", fmt.Errorf("git fetch of %s: %v: %s", target, err, gh.redact(out))
	}
	if _, err := gitws.Git(ctx, dir, "rev-parse", "--verify", "--quiet", sha+"^{commit}"); err != nil {
		return "", fmt.Errorf("GitHub names %s as %s, which the fetch from %s did not bring", sha, target, gh.remote)
	}
	return sha, nil
}

// landsOnGitHub vets what the pull request brings into the target on GitHub, immediately before
// auto-merge is armed: GitHub's compare of the target with the head (target...head, what a merge
// lands, renames with their old names), as the gh-actions human gate lists it, with what the
// runner's merge into GitHub's target lands (f.landed): the human gate reads both at once. It
// says whether it may be armed; otherwise it refused the proposal, engaged the maintainer's
// ask, or left it waiting, saying why. 300 files or more (GitHub lists no more) wait for a
// maintainer.
func (f *flow) landsOnGitHub(ctx context.Context, gh *ghCode, pr *github.PullRequest) bool {
	cmp, _, err := gh.client.Repositories.CompareCommits(ctx, gh.owner, gh.name, f.p.Target, f.p.Head, nil)
	if err != nil {
		f.wait(ctx, fmt.Sprintf("approved; GitHub's compare of %s with %s cannot be read (tick retries): %v", f.p.Target, short(f.p.Head), err))
		return false
	}
	var files []string
	for _, c := range cmp.Files {
		files = append(files, c.GetFilename())
		if p := c.GetPreviousFilename(); p != "" {
			files = append(files, p)
		}
	}
	again, _, err := gh.client.PullRequests.Get(ctx, gh.owner, gh.name, pr.GetNumber())
	switch {
	case err != nil:
		f.wait(ctx, fmt.Sprintf("approved; pull request #%d cannot be read (tick retries): %v", pr.GetNumber(), err))
		return false
	case !strings.EqualFold(again.GetHead().GetSHA(), f.p.Head) || again.GetBase().GetRef() != f.p.Target:
		f.wait(ctx, fmt.Sprintf("approved; pull request #%d moved while its files were listed (head %s into %s; tick retries)", pr.GetNumber(), short(again.GetHead().GetSHA()), again.GetBase().GetRef()))
		return false
	}
	cfg, err := f.r.In.Actor(f.p.Actor)
	if err != nil {
		f.refuse(ctx, err.Error(), nil)
		return false
	}
	if reason, bad := mergecheck.Vet(files, f.p.Actor, capScope(cfg, "code:propose")); reason != "" {
		f.refuse(ctx, "on GitHub, the pull request brings what the checks refuse: "+reason, bad)
		return false
	}
	// One gate, on what the merge lands (f.landed) and what the compare lists: two, each
	// engaging its own ask for its own list, would each be approved in turn without end.
	touched, ok := f.humanTouched(ctx, mergecheck.Union(f.landed, files))
	if !ok {
		return false
	}
	if len(cmp.Files) >= maxCompareFiles {
		touched = append(touched, fmt.Sprintf("%d files or more (GitHub's compare lists no more, so a person vets them)", maxCompareFiles))
	}
	touched, ok = f.forPerson(ctx, mergecheck.Union(f.landed, files), touched)
	return ok && f.personApproves(ctx, touched)
}

// mergesAsVetted says why GitHub's merge of the proposal could land what the runner did not vet
// ("" when it cannot): its head is up to date with GitHub's target (f.old, what the checks
// read), or the target's protection requires it up to date (strict), so GitHub merges it only
// as the head is. Otherwise GitHub merges a head behind its target 3-way against the target as
// it is then, which may have moved since the runner vetted the merge.
func (f *flow) mergesAsVetted(ctx context.Context, gh *ghCode) string {
	if f.old == "" {
		return "" // its head is in GitHub's target already (targetBase): it lands nothing
	}
	if _, err := gitws.Git(ctx, f.dir(), "merge-base", "--is-ancestor", f.old, f.p.Head); err == nil {
		return ""
	}
	prot, _, err := gh.client.Repositories.GetBranchProtection(ctx, gh.owner, gh.name, f.p.Target)
	if err == nil && prot.GetRequiredStatusChecks() != nil && prot.GetRequiredStatusChecks().Strict {
		return ""
	}
	why := fmt.Sprintf("its head %s is behind %s, and %s's protection does not require heads up to date before merging", short(f.p.Head), f.p.Target, f.p.Target)
	if err != nil {
		why = fmt.Sprintf("its head %s is behind %s, and %s's protection cannot be read with the runner's token (%v)", short(f.p.Head), f.p.Target, f.p.Target, err)
	}
	return why + fmt.Sprintf(": GitHub would merge it against %s as it is then, which the runner cannot vet. Require branches to be up to date before merging (autonomy provision does), or propose again from the current %s (tick retries)", f.p.Target, f.p.Target)
}
