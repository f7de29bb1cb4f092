package ghfake

import (
	"context"
	"net/url"
	"slices"
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

// TestSetStateRecordsClosedAndReopened: a person's closing and reopening are the issue's state and
// the repository's closed and reopened events, by that person; a state unchanged records nothing.
func TestSetStateRecordsClosedAndReopened(t *testing.T) {
	s := newServer(t, Options{Owner: "acme"})
	n := s.OpenIssue("mallory", "please", "body")
	for _, st := range []string{"closed", "closed", "open"} {
		if err := s.SetState(n, "carol", st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetState(n, "carol", "merged"); err == nil {
		t.Error("a state that is neither open nor closed was taken")
	}
	if err := s.SetState(n+1, "carol", "closed"); err == nil {
		t.Error("a missing issue was closed")
	}
	c := github.NewClient(s.Client()).WithAuthToken(tok)
	c.BaseURL, _ = url.Parse(s.URL)
	ctx := context.Background()
	is, _, err := c.Issues.Get(ctx, "acme", "r", n)
	if err != nil || is.GetState() != "open" {
		t.Fatalf("issue %+v, %v", is, err)
	}
	events, _, err := c.Issues.ListRepositoryEvents(ctx, "acme", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.GetEvent()+" by "+e.GetActor().GetLogin())
	}
	if want := []string{"reopened by carol", "closed by carol"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
