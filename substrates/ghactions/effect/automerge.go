package effect

import (
	"context"
	"fmt"
	"strings"
)

// armAutoMerge enables auto-merge on a pull request (GitHub's GraphQL
// enablePullRequestAutoMerge; REST has no endpoint for it), so it merges once branch protection
// is satisfied: the agent-review status and the required checks on its head. Nobody merges it
// by hand, and nothing merges it sooner.
func (e *Env) armAutoMerge(ctx context.Context, nodeID string) error {
	if nodeID == "" {
		return fmt.Errorf("the pull request has no node id")
	}
	url := e.GraphQLURL
	if url == "" {
		url = "graphql"
	}
	body := map[string]any{
		"query":     `mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH}) { pullRequest { number } } }`,
		"variables": map[string]any{"id": nodeID},
	}
	req, err := e.Client.NewRequest("POST", url, body)
	if err != nil {
		return err
	}
	var out struct {
		Errors []struct{ Message string } `json:"errors"`
	}
	if _, err := e.Client.Do(ctx, req, &out); err != nil {
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
