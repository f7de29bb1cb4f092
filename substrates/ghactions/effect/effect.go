// Package effect is what the trusted jobs of a gh-actions installation do (autonomy gh propose,
// autonomy gh review): they read an agent's output as data (a git bundle, a verdict file) and
// move or bless code with the job's token, so that the job that runs the model never holds those
// powers. It also proves, before a workflow playbook's approval job runs a step, that GitHub
// held the job for a required reviewer's approval (autonomy gh gate, gate.go). See
// docs/gh-actions.md.
package effect

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/internal/mergecheck"
)

// Env is what a trusted job knows: the repository, its token and the installation's data, as
// the generated workflow passes them (see FromEnv).
type Env struct {
	Client      *github.Client
	Owner, Repo string
	// Remote is the git URL pushed to; Token authenticates an http(s) remote.
	Remote, Token string
	// Dir is the checkout the job works in.
	Dir string
	// Actor and Subject (its work item, or for a review the pull request number).
	Actor, Subject string
	// Scope is the path glob of a scoped code:propose (empty: any path).
	Scope string
	// Policy is .autonomy/policy.json; HumanPaths the human-required paths
	// (policy.box.risk.human_required_paths, verbatim) and GoverningDocs the governing documents
	// (documents.roles vision and constitution), a list of its own: the gate holds both.
	Policy        Policy
	HumanPaths    []string
	GoverningDocs []string
	// ReviewerWorkflow and ReviewerInput dispatch the proposer's reviewer.
	ReviewerWorkflow, ReviewerInput string
	// InputActor is the human actor the profile routes input-required to (AUTONOMY_INPUT_ACTOR;
	// "" when it routes none: the maintainers are engaged directly).
	InputActor string
	// ResultSchema is the installed result contract of a reviewer ("" for autonomy.review.v1).
	ResultSchema string
	// RunURL links the run that acted.
	RunURL string
	// GraphQLURL is GitHub's GraphQL endpoint (GITHUB_GRAPHQL_URL; "graphql" under the API root
	// when empty).
	GraphQLURL string
	// RunID is this run's id (GITHUB_RUN_ID); Now the clock (AUTONOMY_NOW, RFC 3339, fixes it
	// for tests; time.Now when nil).
	RunID string
	Now   func() time.Time
	Out   io.Writer
}

// Policy is the part of policy.box the trusted jobs read.
type Policy struct {
	Box struct {
		TaskStates      map[string]string `json:"taskStates"`
		MaxOpenAgentPRs int               `json:"max_open_agent_prs"`
		// Autonomy is the reference implementation's section, where its profiles set the cap.
		Autonomy struct {
			MaxOpenAgentPRs int `json:"max_open_agent_prs"`
		} `json:"autonomy"`
		Human     HumanPolicy `json:"human"`
		GHActions struct {
			CommitSigning string `json:"commit_signing"`
			// PausedLabel is the label that pauses one work item (PausedLabel).
			PausedLabel string `json:"paused_label"`
			// TrustedRoles are the trusted author associations (TrustedRoles).
			TrustedRoles    []string `json:"trustedRoles"`
			DispatchChecks  []string `json:"propose_dispatch_checks"`
			DispatchReviews []string `json:"propose_dispatch_reviews"`
			// Tools caps the effects of a session per tool and stages them (autonomy gh apply).
			Tools struct {
				Max    map[string]int `json:"max"`
				Staged bool           `json:"staged"`
			} `json:"tools"`
		} `json:"gh-actions"`
	} `json:"box"`
}

// TrustedRoles are the author associations policy.box.gh-actions.trustedRoles trusts, or
// ghevent.TrustedRoles: the roles whose events the compiled workflows act on.
func (p Policy) TrustedRoles() []string {
	if r := p.Box.GHActions.TrustedRoles; len(r) > 0 {
		return r
	}
	return ghevent.TrustedRoles
}

// maxOpenAgentPRs is the cap on open agent pull requests: policy.box.max_open_agent_prs, or the
// reference's spelling, policy.box.autonomy.max_open_agent_prs (0: no cap).
func (p Policy) maxOpenAgentPRs() int {
	if p.Box.MaxOpenAgentPRs > 0 {
		return p.Box.MaxOpenAgentPRs
	}
	return p.Box.Autonomy.MaxOpenAgentPRs
}

// label is the tracker's name of a task state.
func (p Policy) label(state string) string {
	if l := p.Box.TaskStates[state]; l != "" {
		return l
	}
	return state
}

// FromEnv reads what the generated workflow gives a trusted job: GITHUB_REPOSITORY,
// GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID, GH_TOKEN and the AUTONOMY_* variables.
func FromEnv(getenv func(string) string, out io.Writer) (*Env, error) {
	repo := getenv("GITHUB_REPOSITORY")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, fmt.Errorf("GITHUB_REPOSITORY is %q, want OWNER/NAME", repo)
	}
	token := getenv("GH_TOKEN")
	if token == "" {
		return nil, fmt.Errorf("GH_TOKEN is not set: the job's token is needed")
	}
	client := github.NewClient(nil).WithAuthToken(token)
	if api := getenv("GITHUB_API_URL"); api != "" {
		// GITHUB_API_URL is the exact API root (GitHub Enterprise Server's included).
		u, err := url.Parse(strings.TrimSuffix(api, "/") + "/")
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("GITHUB_API_URL is %q, want an http(s) URL", api)
		}
		client.BaseURL = u
	}
	server := getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	e := &Env{Client: client, Owner: owner, Repo: name, Token: token, Dir: ".",
		Remote: server + "/" + repo + ".git", Actor: getenv("AUTONOMY_ACTOR"), Subject: getenv("AUTONOMY_SUBJECT"),
		Scope: getenv("AUTONOMY_PROPOSE_SCOPE"), ReviewerWorkflow: getenv("AUTONOMY_REVIEWER_WORKFLOW"),
		ReviewerInput: getenv("AUTONOMY_REVIEWER_REF_INPUT"), ResultSchema: getenv("AUTONOMY_RESULT_SCHEMA"), InputActor: getenv("AUTONOMY_INPUT_ACTOR"), Out: out}
	if t := getenv("AUTONOMY_NOW"); t != "" {
		at, err := time.Parse(time.RFC3339, t)
		if err != nil {
			return nil, fmt.Errorf("AUTONOMY_NOW is %q, want an RFC 3339 time", t)
		}
		e.Now = func() time.Time { return at }
	}
	if id := getenv("GITHUB_RUN_ID"); id != "" {
		e.RunID = id
		e.RunURL = server + "/" + repo + "/actions/runs/" + id
	}
	e.GraphQLURL = getenv("GITHUB_GRAPHQL_URL")
	if r := getenv("AUTONOMY_REMOTE"); r != "" {
		e.Remote = r
	}
	if p := getenv("AUTONOMY_POLICY"); p != "" {
		if err := readJSON(p, &e.Policy); err != nil {
			return nil, err
		}
	}
	if p := getenv("AUTONOMY_HUMAN_REQUIRED_PATHS"); p != "" {
		var doc struct {
			Paths     []string `json:"human_required_paths"`
			Governing []string `json:"governing_documents"`
		}
		if err := readJSON(p, &doc); err != nil {
			return nil, err
		}
		e.HumanPaths, e.GoverningDocs = doc.Paths, doc.Governing
	}
	return e, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// git runs git in the checkout and returns its trimmed output; args are never parsed by a shell.
func (e *Env) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = e.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// gitBytes runs git and returns its output as it is (a blob's content).
func (e *Env) gitBytes(args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = e.Dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return out, nil
}

// DefaultBranch is the repository's default branch, as GitHub says now.
func (e *Env) DefaultBranch(ctx context.Context) (string, error) {
	repo, _, err := e.Client.Repositories.Get(ctx, e.Owner, e.Repo)
	if err != nil {
		return "", fmt.Errorf("reading the repository's default branch: %w", err)
	}
	return repo.GetDefaultBranch(), nil
}

// remoteArgs are git's options to reach the remote with the job's token (http remotes only).
func (e *Env) remoteArgs() []string {
	if !strings.HasPrefix(e.Remote, "http://") && !strings.HasPrefix(e.Remote, "https://") {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + e.Token))
	return []string{"-c", "http.extraheader=AUTHORIZATION: basic " + basic}
}

// Match reports whether a repository path matches a glob of human_required_paths or a scope
// (mergecheck.Match).
func Match(glob, path string) bool { return mergecheck.Match(glob, path) }

// humanRequired are the paths among changed that need a maintainer: those under a human-required
// path or a governing document.
func (e *Env) humanRequired(changed []string) []string {
	return matching(changed, append(append([]string(nil), e.HumanPaths...), e.GoverningDocs...))
}

// matching lists the paths that match any of globs.
func matching(paths, globs []string) []string { return mergecheck.Matching(paths, globs) }

// comment posts body on issue or pull request n.
func (e *Env) comment(ctx context.Context, n int, body string) error {
	_, err := e.postComment(ctx, n, body)
	return err
}

// postComment posts body on item n and returns the comment's id.
func (e *Env) postComment(ctx context.Context, n int, body string) (int64, error) {
	c, _, err := e.Client.Issues.CreateComment(ctx, e.Owner, e.Repo, n, &github.IssueComment{Body: github.String(body)})
	return c.GetID(), err
}

// Refused is a change the trusted job will not make; it has said why on the work item.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }
