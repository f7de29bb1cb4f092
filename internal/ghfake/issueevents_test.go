package ghfake

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
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

// TestAMergeRecordsMergedAndClosed: a pull request merged, by the auto-merge a person's token
// armed or by a person's merge button, is merged_by that person, and the repository's issue
// events record it merged (commit_id: the commit that landed) then closed, by them, as GitHub's
// timeline does.
func TestAMergeRecordsMergedAndClosed(t *testing.T) {
	for _, tc := range []struct {
		name, by string
		merge    func(s *Server, n int, checked func()) error
	}{
		{"auto-merge armed by the operator's token", "octo-owner", func(s *Server, n int, checked func()) error {
			q := `{"query":"mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH}) { pullRequest { number } } }","variables":{"id":"` + nodeID(n) + `"}}`
			if _, body := call(t, s, "POST", "/graphql", q); body["errors"] != nil {
				return fmt.Errorf("arming: %v", body)
			}
			if _, pr := call(t, s, "GET", "/repos/acme/r/pulls/"+strconv.Itoa(n), ""); pr["auto_merge"].(map[string]any)["enabled_by"].(map[string]any)["login"] != "octo-owner" {
				return fmt.Errorf("auto_merge %v", pr["auto_merge"])
			}
			checked() // GitHub merges it then
			return nil
		}},
		{"the merge button", "maintainer", func(s *Server, n int, checked func()) error {
			checked()
			return s.MergePull(n, "maintainer", "squash")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, head := codeHost(t, Options{Owner: "acme", WritesAs: "octo-owner", AutoMergeMerges: true})
			s.SetSettings(Settings{AllowAutoMerge: true, DefaultWorkflowPermissions: "read"})
			s.Protect("main", Protection{Contexts: []string{"ci"}})
			_, body := call(t, s, "POST", "/repos/acme/r/pulls", `{"title":"the change","head":"feature","base":"main"}`)
			n := int(body["number"].(float64))
			checked := func() { call(t, s, "POST", "/repos/acme/r/statuses/"+head, `{"state":"success","context":"ci"}`) }
			if err := tc.merge(s, n, checked); err != nil {
				t.Fatal(err)
			}
			c := github.NewClient(s.Client()).WithAuthToken(tok)
			c.BaseURL, _ = url.Parse(s.URL)
			ctx := context.Background()
			pr, _, err := c.PullRequests.Get(ctx, "acme", "r", n)
			if err != nil || !pr.GetMerged() || pr.GetState() != "closed" || pr.GetMergedBy().GetLogin() != tc.by {
				t.Fatalf("pull request: merged %v, %s, by %q: %v", pr.GetMerged(), pr.GetState(), pr.GetMergedBy().GetLogin(), err)
			}
			events, _, err := c.Issues.ListRepositoryEvents(ctx, "acme", "r", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range events {
				got = append(got, fmt.Sprintf("%s #%d by %s at %s", e.GetEvent(), e.GetIssue().GetNumber(), e.GetActor().GetLogin(), e.GetCommitID()))
			}
			want := []string{fmt.Sprintf("closed #%d by %s at ", n, tc.by), fmt.Sprintf("merged #%d by %s at %s", n, tc.by, pr.GetMergeCommitSHA())}
			if pr.GetMergeCommitSHA() == "" || !slices.Equal(got, want) {
				t.Fatalf("issue events %q, want %q", got, want)
			}
		})
	}
}
