// Package ghwrite realizes the tools' effects on work items through GitHub's REST API: a
// comment, a new issue, a move to a lifecycle state (its label). Both trusted sides that hold a
// write token use it: the gh-actions apply job (autonomy gh apply) and the local runner for
// codeHost github. The checks (capability, scope, caps) are the caller's, done before.
package ghwrite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// Repo is one repository written to.
type Repo struct {
	Client      *github.Client
	Owner, Name string
	// Label is the label of a lifecycle state (policy.box.taskStates, else the state's name).
	Label func(state string) string
	// Record, when set, is told of each comment, issue and label change before it is sent
	// (record.go); the local runner records them so that its event source does not fire on them.
	Record Recorder
}

// Number reads a work item reference (42 or #42) as an issue or pull request number; anything
// else is refused in words the model reads.
func Number(field, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(v, "#"))
	if err != nil || n <= 0 {
		return 0, &tools.Refused{Tool: field, Reason: fmt.Sprintf("%s %q is not an issue or pull request number", field, v)}
	}
	return n, nil
}

// TargetRefused reports whether GitHub answered an effect with 404, 410 or 422: the target or
// the input the model chose, not the trusted side, is at fault.
func TargetRefused(err error) bool {
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response == nil {
		return false
	}
	switch ge.Response.StatusCode {
	case 404, 410, 422:
		return true
	}
	return false
}

// Comment posts a comment on a work item; staged, it says what it would do.
func (r Repo) Comment(ctx context.Context, v *tools.CommentInput, staged bool) (string, error) {
	n, err := Number("item", v.Item)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(strings.TrimSpace(v.Body), "<!-- autonomy:") {
		// The bot's markers record asks, resolutions and retractions: only the trusted side writes them.
		return "", &tools.Refused{Tool: tools.Comment, Reason: "a comment may not start with an autonomy marker (<!-- autonomy:…): start it with text"}
	}
	body := tools.Neutralize(v.Body)
	if err := refuseCommand(body); err != nil {
		return "", err
	}
	if staged {
		return fmt.Sprintf("would comment on #%d", n), nil
	}
	var id int64
	err = r.send(ctx, Write{Kind: "comment", Item: n, Body: body}, func() (int64, *github.Response, error) {
		c, resp, err := r.Client.Issues.CreateComment(ctx, r.Owner, r.Name, n, &github.IssueComment{Body: github.String(body)})
		id = c.GetID()
		return id, resp, err
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("commented on #%d (comment %d)", n, id), nil
}

// refuseCommand refuses a comment's body that holds an /agent command on any line
// (ghevent.CommandLine): the comment is posted with the trusted side's token (the operator's own
// on the local runner), and autonomy's command parsers would obey it as that identity's order.
func refuseCommand(body string) error {
	n, line := ghevent.CommandLine(body)
	if n == 0 {
		return nil
	}
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60]) + "…"
	}
	return &tools.Refused{Tool: tools.Comment, Reason: fmt.Sprintf("nothing was posted: line %d of the comment (%q) starts with /agent, "+
		"which autonomy obeys as a command from whoever posts it, and this comment is posted with the token that applies it "+
		"(on the local runner, the operator's own): it would be an order in their name. A session gives no /agent commands; "+
		"to mention one, put it inside a sentence or in backticks (`/agent …`)", n, line)}
}

// CreateIssue opens an issue; staged, it says what it would do.
func (r Repo) CreateIssue(ctx context.Context, v *tools.NewItem, staged bool) (string, error) {
	if staged {
		return fmt.Sprintf("would create an issue %q", v.Title), nil
	}
	w := Write{Kind: "issue", Title: tools.Neutralize(v.Title), Body: tools.Neutralize(v.Body), Labels: v.Labels}
	req := &github.IssueRequest{Title: github.String(w.Title), Body: github.String(w.Body)}
	if len(v.Labels) > 0 {
		req.Labels = &v.Labels
	}
	n := 0
	err := r.send(ctx, w, func() (int64, *github.Response, error) {
		is, resp, err := r.Client.Issues.Create(ctx, r.Owner, r.Name, req)
		n = is.GetNumber()
		return int64(n), resp, err
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("created #%d", n), nil
}

// SetState moves an item to a lifecycle state: the state's label is added and every other
// state's label removed.
func (r Repo) SetState(ctx context.Context, v *tools.StateChange, staged bool) (string, error) {
	n, err := Number("item", v.Item)
	if err != nil {
		return "", err
	}
	want := r.Label(v.State)
	if staged {
		return fmt.Sprintf("would move #%d to %s (label %s)", n, v.State, want), nil
	}
	is, _, err := r.Client.Issues.Get(ctx, r.Owner, r.Name, n)
	if err != nil {
		return "", err
	}
	// GitHub matches label names whatever their case: so does this.
	others := map[string]bool{}
	for _, s := range ir.StateNames() {
		if l := r.Label(s); !strings.EqualFold(l, want) {
			others[strings.ToLower(l)] = true
		}
	}
	has := false
	for _, l := range is.Labels {
		has = has || strings.EqualFold(l.GetName(), want)
		if others[strings.ToLower(l.GetName())] {
			if err := r.send(ctx, Write{Kind: "unlabeled", Item: n, Label: l.GetName()}, func() (int64, *github.Response, error) {
				resp, err := r.Client.Issues.RemoveLabelForIssue(ctx, r.Owner, r.Name, n, l.GetName())
				return 0, resp, err
			}); err != nil {
				return "", err
			}
		}
	}
	// A label the item carries is not added again: GitHub would record no event for it, and a
	// write recorded (Record) with no event would stand for a person's labeling later.
	if !has {
		if err := r.send(ctx, Write{Kind: "labeled", Item: n, Label: want}, func() (int64, *github.Response, error) {
			_, resp, err := r.Client.Issues.AddLabelsToIssue(ctx, r.Owner, r.Name, n, []string{want})
			return 0, resp, err
		}); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("moved #%d to %s", n, v.State), nil
}

// ArmAutoMerge enables auto-merge on the pull request of node id nodeID (GitHub's GraphQL
// enablePullRequestAutoMerge; REST has no endpoint for it), squashing, so it merges once branch
// protection is satisfied (the agent-review status and the required checks on its head); with
// head set, only while the pull request's head is that commit (expectedHeadOid). graphqlURL is
// the GraphQL endpoint (GITHUB_GRAPHQL_URL), "" for the client's base URL + graphql.
func ArmAutoMerge(ctx context.Context, c *github.Client, graphqlURL, nodeID, head string) error {
	if nodeID == "" {
		return fmt.Errorf("the pull request has no node id")
	}
	if graphqlURL == "" {
		graphqlURL = "graphql"
	}
	body := map[string]any{
		"query":     `mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH}) { pullRequest { number } } }`,
		"variables": map[string]any{"id": nodeID},
	}
	if head != "" {
		body["query"] = `mutation($id: ID!, $head: GitObjectID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH, expectedHeadOid: $head}) { pullRequest { number } } }`
		body["variables"] = map[string]any{"id": nodeID, "head": head}
	}
	req, err := c.NewRequest("POST", graphqlURL, body)
	if err != nil {
		return err
	}
	var out struct {
		Errors []struct{ Message string } `json:"errors"`
	}
	if _, err := c.Do(ctx, req, &out); err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		var msgs []string
		for _, m := range out.Errors {
			msgs = append(msgs, m.Message)
		}
		return fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return nil
}
