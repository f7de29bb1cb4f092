package local

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// The code flow for codeHost github (docs/local.md, "The code flow"): the same checks, reviewer
// and binding as for local-git, with GitHub as the code host, the checks taking the target as
// GitHub has it (codeflow_ghbase.go). Once a proposal passes the checks, the runner pushes its head to autonomy/<actor>/<subject> on the installation's origin remote
// and opens (or reuses) the pull request into the target branch; the reviewer runs locally on
// that head; its verdict, bound to the head, is posted as the agent-review commit status on it
// (as gh-actions' review job does); and an approval of that exact head (after a maintainer's
// verified act for human-required paths, and once GitHub's list of what the pull request brings
// is vetted again) arms GitHub's auto-merge with that head expected
// (as gh-actions' propose job arms it): GitHub merges it once branch protection is satisfied,
// and never a head nobody reviewed. The runner merges nothing itself. Every call is made with
// the runner's own token (GH_TOKEN, else GITHUB_TOKEN), which no session receives.

// reviewContext is the commit status a verdict is posted as, the one branch protection requires
// (as on gh-actions).
const reviewContext = "agent-review"

// ghCode is the runner's GitHub for the code flow.
type ghCode struct {
	client      *github.Client
	owner, name string
	token       string
	// server is GitHub's URL (GITHUB_SERVER_URL, else https://github.com), the one host the
	// token is sent to; remote is where the runner pushes and fetches:
	// <server>/<owner>/<name>.git, never read from the repository (see push); scratch is the
	// runner's folder of the transfers' git directories.
	server  string
	remote  string
	scratch string
	graphql string
}

// github opens the code flow's GitHub, or says why it cannot.
func (f *flow) github(ctx context.Context) (*ghCode, error) {
	env := f.r.opts.Env
	token := runnerToken(env)
	if token == "" {
		return nil, errors.New("the runner holds no GitHub token: start it with GH_TOKEN (or GITHUB_TOKEN) set; no session receives it")
	}
	boxRepo := ""
	if ev := f.r.In.Runner.Events; ev != nil {
		boxRepo = ev.Repo
	}
	owner, name, err := f.r.githubRepo(boxRepo, sessionenv.Lookup(env, "GITHUB_REPOSITORY"))
	if err != nil {
		return nil, err
	}
	c, err := githubClient(token, sessionenv.Lookup(env, "GITHUB_API_URL"), nil)
	if err != nil {
		return nil, err
	}
	server := strings.TrimSuffix(or(sessionenv.Lookup(env, "GITHUB_SERVER_URL"), "https://github.com"), "/")
	if u, err := url.Parse(server); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("GITHUB_SERVER_URL %q: give GitHub's URL as http(s)://HOST, like https://github.com", server)
	}
	return &ghCode{client: c, owner: owner, name: name, token: token, server: server, remote: server + "/" + owner + "/" + name + ".git",
		scratch: f.r.In.Path(StateDir + "/git"), graphql: sessionenv.Lookup(env, "GITHUB_GRAPHQL_URL")}, nil
}

// ghBranch is the branch a proposal is pushed to: autonomy/<actor>/<subject> (the proposer's
// work item in its one spelling, itemRef, else its session when that makes no valid branch
// name), as gh-actions' propose job names it.
func (f *flow) ghBranch(ctx context.Context) string {
	branch := "autonomy/" + f.p.Actor + "/"
	if s, ok, _ := f.r.Store.Get(ctx, f.p.Session); ok && s.Ref != "" {
		if b := branch + itemRef(s.Ref); gitws.ValidBranch(b) == nil {
			return b
		}
	}
	return branch + f.p.Session
}

func pullKey(seq int64) string { return "proposal-pull:" + strconv.FormatInt(seq, 10) }

// pullOf is the number of the pull request the proposal was opened as (0 when none yet).
func (f *flow) pullOf(ctx context.Context) int {
	var n int
	_ = f.r.Store.Tx(ctx, func(tx *store.Tx) error {
		v, _, err := tx.Meta(pullKey(f.p.Seq))
		n, _ = strconv.Atoi(v)
		return err
	})
	return n
}

// openPull pushes the proposal's head and opens its pull request; false when it did not, the
// proposal then waiting (tick retries) or refused, saying why.
func (f *flow) openPull(ctx context.Context) bool {
	gh, err := f.github(ctx)
	if err != nil {
		f.wait(ctx, "not proposed on GitHub: "+err.Error())
		return false
	}
	branch := f.ghBranch(ctx)
	open, err := gh.openPull(ctx, branch, f.p.Target)
	if err != nil {
		f.wait(ctx, "the pull requests cannot be read (tick retries): "+err.Error())
		return false
	}
	if open != nil && open.GetAutoMerge() != nil && !strings.EqualFold(open.GetHead().GetSHA(), f.p.Head) {
		// A push would put this head, not reviewed yet, under the auto-merge armed for another.
		f.wait(ctx, fmt.Sprintf("pull request #%d from %s is armed to merge %s, another proposal's head: this one waits until GitHub merges or closes it (tick retries)",
			open.GetNumber(), branch, short(open.GetHead().GetSHA())))
		return false
	}
	if err := recordProposalPush(ctx, f.r.Store, branch, f.p.Head, f.r.opts.Now()); err != nil {
		f.wait(ctx, "the push cannot be recorded (tick retries): "+err.Error())
		return false
	}
	if err := gh.push(ctx, f.repo, f.p.Head, branch); err != nil {
		f.wait(ctx, fmt.Sprintf("the push of %s to %s failed (tick retries): %v", short(f.p.Head), branch, err))
		return false
	}
	n, err := gh.pull(ctx, open, branch, f.p.Target, f.p.Title, f.p.Body)
	if err != nil {
		if ghwrite.TargetRefused(err) {
			f.refuse(ctx, "GitHub refused the pull request: "+err.Error(), nil)
		} else {
			f.wait(ctx, "the pull request was not opened (tick retries): "+err.Error())
		}
		return false
	}
	_ = f.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(pullKey(f.p.Seq), strconv.Itoa(n)) })
	return true
}

// push force-pushes head to branch on GitHub (gh.remote), with the token in git's environment
// (never in its arguments, which every user sees), for GitHub's server alone
// (http.<server>/.extraHeader). It reads no configuration of the repository's, whose git
// directory a session can write (gitws.Remote): no proxy, TLS setting, header, URL rewrite or
// remote of its sends the push, or the token, anywhere else.
func (gh *ghCode) push(ctx context.Context, repo, head, branch string) error {
	out, err := gitws.Push(ctx, repo, gh.git(), head, "refs/heads/"+branch)
	if err != nil {
		return fmt.Errorf("%v: %s", err, gh.redact(out))
	}
	return nil
}

// git is GitHub as the runner's push and fetch reach it, with the token (see push).
func (gh *ghCode) git() gitws.Remote {
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + gh.token))
	return gitws.Remote{URL: gh.remote, Scratch: gh.scratch,
		Env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http." + gh.server + "/.extraHeader", "GIT_CONFIG_VALUE_0=AUTHORIZATION: basic " + basic}}
}

// redact is git's output without the token.
func (gh *ghCode) redact(out []byte) string {
	return strings.ReplaceAll(strings.TrimSpace(string(out)), gh.token, "***")
}

// openPull is the open pull request from branch into base (nil when there is none).
func (gh *ghCode) openPull(ctx context.Context, branch, base string) (*github.PullRequest, error) {
	open, _, err := gh.client.PullRequests.List(ctx, gh.owner, gh.name, &github.PullRequestListOptions{State: "open", Base: base,
		Head: gh.owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, err
	}
	for _, p := range open {
		// The repository's own branch only: a fork's pull request from a branch of the same name
		// (head.repo another repository, or null) is not the proposal's.
		if p.GetHead().GetRef() == branch && p.GetBase().GetRef() == base && strings.EqualFold(p.GetHead().GetRepo().GetFullName(), gh.owner+"/"+gh.name) {
			return p, nil
		}
	}
	return nil, nil
}

// pull is the number of open, the open pull request from branch into base, or of the one it
// opens when there is none.
func (gh *ghCode) pull(ctx context.Context, open *github.PullRequest, branch, base, title, body string) (int, error) {
	if open != nil {
		return open.GetNumber(), nil
	}
	if body == "" {
		body = "Proposed by the local autonomy runner."
	}
	p, _, err := gh.client.PullRequests.Create(ctx, gh.owner, gh.name, &github.NewPullRequest{Title: github.String(title),
		Head: github.String(branch), Base: github.String(base), Body: github.String(body)})
	if err != nil {
		return 0, err
	}
	return p.GetNumber(), nil
}

// postVerdict posts the reviewer's verdict on the proposal's head as the agent-review status;
// it says what it did, for the proposal's reason.
func (f *flow) postVerdict(ctx context.Context, approved bool, why string) string {
	if f.r.In.Runner.CodeHost != "github" {
		return ""
	}
	gh, err := f.github(ctx)
	if err != nil {
		return "; no status posted: " + err.Error()
	}
	state := "failure"
	if approved {
		state = "success"
	}
	desc := why
	if len(desc) > 140 { // GitHub's limit on a status's description
		desc = desc[:137] + "..."
	}
	_, _, err = gh.client.Repositories.CreateStatus(ctx, gh.owner, gh.name, f.p.Head, &github.RepoStatus{State: github.String(state),
		Context: github.String(reviewContext), Description: github.String(desc)})
	if err != nil {
		return fmt.Sprintf("; the %s status was not posted: %v", reviewContext, err)
	}
	return fmt.Sprintf("; %s: %s on %s", reviewContext, state, short(f.p.Head))
}

// headOnGitHub is the head of the proposal's pull request on GitHub ("" when it cannot be read).
func (f *flow) headOnGitHub(ctx context.Context) (string, *github.PullRequest, error) {
	gh, err := f.github(ctx)
	if err != nil {
		return "", nil, err
	}
	n := f.pullOf(ctx)
	if n == 0 {
		return "", nil, errors.New("no pull request was opened for it")
	}
	pr, _, err := gh.client.PullRequests.Get(ctx, gh.owner, gh.name, n)
	if err != nil {
		return "", nil, err
	}
	return pr.GetHead().GetSHA(), pr, nil
}

// mergeOnGitHub arms auto-merge on the approved proposal's pull request, for its reviewed head
// only; once armed, it watches for GitHub's merge.
func (f *flow) mergeOnGitHub(ctx context.Context) {
	head, pr, err := f.headOnGitHub(ctx)
	switch {
	case err != nil:
		f.wait(ctx, "approved; its pull request cannot be read (tick retries): "+err.Error())
		return
	case pr.GetMerged() && !strings.EqualFold(head, f.p.Head):
		// Its auto-merge was disarmed, and another head pushed onto its branch merged.
		f.refuse(ctx, fmt.Sprintf("superseded: GitHub merged pull request #%d with head %s, not this proposal's %s; nothing of it merged as reviewed", pr.GetNumber(), short(head), short(f.p.Head)), nil)
		return
	case pr.GetMerged():
		f.move(ctx, func(m *store.Proposal) {
			m.State, m.Reason = store.ProposalMerged, fmt.Sprintf("merged on GitHub: pull request #%d (%s)", pr.GetNumber(), short(pr.GetMergeCommitSHA()))
		})
		return
	case pr.GetState() != "open":
		f.refuse(ctx, fmt.Sprintf("its pull request #%d was closed unmerged", pr.GetNumber()), nil)
		return
	case !strings.EqualFold(head, f.p.Head):
		f.refuse(ctx, fmt.Sprintf("stale approval: pull request #%d moved to %s after the review of %s; nothing is merged", pr.GetNumber(), short(head), short(f.p.Head)), nil)
		return
	}
	armed := fmt.Sprintf("approved; auto-merge armed on pull request #%d for head %s: GitHub merges it once branch protection is satisfied", pr.GetNumber(), short(f.p.Head))
	if f.p.Reason == armed {
		return // armed before; GitHub has not merged it yet
	}
	gh, _ := f.github(ctx)
	if !f.landsOnGitHub(ctx, gh, pr) {
		return // what GitHub would merge is vetted once more (codeflow_ghbase.go)
	}
	if why := f.mergesAsVetted(ctx, gh); why != "" {
		f.wait(ctx, fmt.Sprintf("approved; auto-merge on pull request #%d not armed: %s", pr.GetNumber(), why))
		return
	}
	// Recorded before the request: the merge GitHub makes of it, and its closing, are the code
	// flow's (skipProposalMerge), whatever became of the request's answer.
	if err := f.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(armedKey(f.p.Seq), strings.ToLower(f.p.Head)) }); err != nil {
		f.wait(ctx, fmt.Sprintf("approved; auto-merge on pull request #%d was not armed (tick retries): %v", pr.GetNumber(), err))
		return
	}
	if err := ghwrite.ArmAutoMerge(ctx, gh.client, gh.graphql, pr.GetNodeID(), f.p.Head); err != nil {
		f.wait(ctx, fmt.Sprintf("approved; auto-merge on pull request #%d was not armed (tick retries): %v", pr.GetNumber(), err))
		return
	}
	f.wait(ctx, armed)
}

// staleOnGitHub says whether the proposal's pull request no longer has the head the verdict
// binds to (refused), or cannot be read (left waiting for tick); false for local-git.
func (f *flow) staleOnGitHub(ctx context.Context) bool {
	if !f.r.onGitHub() {
		return false
	}
	head, pr, err := f.headOnGitHub(ctx)
	switch {
	case err != nil:
		f.wait(ctx, "reviewed; its pull request cannot be read (tick retries): "+err.Error())
		return true
	case !strings.EqualFold(head, f.p.Head):
		f.refuse(ctx, fmt.Sprintf("stale verdict: pull request #%d moved to %s after the review of %s; it merges nothing", pr.GetNumber(), short(head), short(f.p.Head)), nil)
		return true
	}
	return false
}
