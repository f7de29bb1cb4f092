package ghfake

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/go-github/v62/github"
)

// TestIssuesAndIssueEvents: the issue list and the repository's issue events as go-github reads
// them: who opened each issue with their association, newest first, and a person's label.
func TestIssuesAndIssueEvents(t *testing.T) {
	s := newServer(t, Options{Owner: "acme", Collaborators: map[string]string{"carol": "triage"}})
	mine := s.OpenIssue("mallory", "please", "body")
	bot := s.AddIssue("from the fleet", "")
	if err := s.Label(mine, "carol", "ready"); err != nil {
		t.Fatal(err)
	}
	c := github.NewClient(s.Client()).WithAuthToken(tok)
	c.BaseURL, _ = url.Parse(s.URL)
	ctx := context.Background()
	issues, _, err := c.Issues.ListByRepo(ctx, "acme", "r", &github.IssueListByRepoOptions{State: "all"})
	if err != nil {
		t.Fatal(err)
	}
	if len(issues) != 2 || issues[0].GetNumber() != bot || issues[1].GetUser().GetLogin() != "mallory" || issues[1].GetAuthorAssociation() != "NONE" || issues[1].CreatedAt == nil {
		t.Fatalf("issues %+v", issues)
	}
	events, resp, err := c.Issues.ListRepositoryEvents(ctx, "acme", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].GetEvent() != "labeled" || events[0].GetActor().GetLogin() != "carol" || events[0].GetLabel().GetName() != "ready" || events[0].GetIssue().GetNumber() != mine {
		t.Fatalf("events %+v", events)
	}
	if resp.Header.Get("ETag") == "" {
		t.Error("no ETag on the issue events")
	}
}
