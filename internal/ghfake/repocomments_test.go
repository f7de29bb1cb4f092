package ghfake

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
)

// TestRepoCommentsConditional: the repository's comment list as go-github reads it, with
// GitHub's author associations, since and sort, and a conditional request answered 304 (free
// of the rate limit) until a comment is added.
func TestRepoCommentsConditional(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newServer(t, Options{Owner: "acme", Collaborators: map[string]string{"carol": "write"}, Now: func() time.Time { return now }})
	n := s.AddIssue("work", "")
	if _, err := s.AddComment(n, "acme", "/agent reviewer"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	s.AddComment(n, "carol", "second")
	s.AddComment(n, "mallory", "third")
	c := github.NewClient(s.Client()).WithAuthToken(tok)
	c.BaseURL, _ = url.Parse(s.URL)
	ctx := context.Background()
	opts := &github.IssueListCommentsOptions{Sort: github.String("created"), Direction: github.String("asc")}
	list, resp, err := c.Issues.ListComments(ctx, "acme", "r", 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range list {
		got = append(got, cm.GetBody()+"/"+cm.GetAuthorAssociation())
		if cm.GetIssueURL() == "" || cm.CreatedAt == nil {
			t.Errorf("comment %d lacks issue_url or created_at", cm.GetID())
		}
	}
	if want := "[/agent reviewer/OWNER second/COLLABORATOR third/NONE]"; fmtList(got) != want {
		t.Fatalf("comments %s, want %s", fmtList(got), want)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	since := now
	list, _, _ = c.Issues.ListComments(ctx, "acme", "r", 0, &github.IssueListCommentsOptions{Since: &since})
	if len(list) != 2 {
		t.Errorf("since %s: %d comments, want the 2 updated since", since, len(list))
	}

	// The same request with If-None-Match: 304, the rate limit untouched.
	cond := func() (*http.Response, int) {
		req, _ := c.NewRequest("GET", "repos/acme/r/issues/comments?direction=asc&sort=created", nil)
		req.Header.Set("If-None-Match", etag)
		resp, err := c.BareDo(ctx, req)
		if err != nil && resp == nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Response, resp.Rate.Remaining
	}
	r1, rem1 := cond()
	r2, rem2 := cond()
	if r1.StatusCode != http.StatusNotModified || r2.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional requests answered %d, %d; want 304", r1.StatusCode, r2.StatusCode)
	}
	if rem1 != rem2 {
		t.Errorf("a 304 spent the rate limit: remaining %d then %d", rem1, rem2)
	}
	s.AddComment(n, "carol", "fourth")
	if r, _ := cond(); r.StatusCode != http.StatusOK {
		t.Errorf("after a new comment the conditional request answered %d, want 200", r.StatusCode)
	}
}

func fmtList(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}
