package ghfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The repository's issues as a poller reads them: who opened each and when, the list of issues
// (pull requests included, as GitHub lists them) and the repository's issue events.

const (
	docsListIssues      = "https://docs.github.com/rest/issues/issues#list-repository-issues"
	docsRepoIssueEvents = "https://docs.github.com/rest/issues/events#list-issue-events-for-a-repository"
)

// pullRequestRef is the pull_request key the issues endpoints give an item that is a pull
// request.
type pullRequestRef struct {
	URL     string `json:"url"`
	HTMLURL string `json:"html_url"`
}

// issueEvent is one event of the repository's issue events: labeled, unlabeled, closed,
// reopened, … by actor.
type issueEvent struct {
	id    int64
	issue int
	event string
	actor string
	label string
	// commit is the commit_id of a merged event: the commit that landed.
	commit string
	at     time.Time
}

// loginOrBot is login, or github-actions[bot] for "" (what a workflow's token writes as).
func loginOrBot(login string) string {
	if login == "" {
		return BotLogin
	}
	return login
}

// OpenIssue opens an issue as login (a person, whose author_association the issue carries) and
// returns its number.
func (s *Server) OpenIssue(login, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.newIssue(&Issue{Title: title, Body: body, State: "open"})
	if s.issueBy == nil {
		s.issueBy = map[int]string{}
	}
	s.issueBy[n] = login
	return n
}

// Label adds label to item n as login (a person with triage access), recording the labeled
// event.
func (s *Server) Label(n int, login, label string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		return fmt.Errorf("ghfake: no issue %d", n)
	}
	if !slices.Contains(is.Labels, label) {
		is.Labels = append(is.Labels, label)
		s.recordIssueEvent(n, "labeled", login, label)
	}
	return nil
}

// recordIssueEvent appends an issue event by actor ("" for the token's bot); the caller holds mu.
func (s *Server) recordIssueEvent(n int, event, actor, label string) {
	s.appendIssueEvent(issueEvent{issue: n, event: event, actor: actor, label: label})
}

// recordCommitEvent appends an issue event about commit (merged) by actor ("" for the token's
// bot); the caller holds mu.
func (s *Server) recordCommitEvent(n int, event, actor, commit string) {
	s.appendIssueEvent(issueEvent{issue: n, event: event, actor: actor, commit: commit})
}

// appendIssueEvent numbers e, dates it now, and appends it; the caller holds mu.
func (s *Server) appendIssueEvent(e issueEvent) {
	e.id, e.actor, e.at = int64(900_000+len(s.issueEvents)+1), loginOrBot(e.actor), s.opts.Now().UTC().Truncate(time.Second)
	s.issueEvents = append(s.issueEvents, e)
}

// listRepoIssueEvents serves GET …/issues/events: the repository's issue events, newest first,
// each with the issue it is on, paged, with an ETag (If-None-Match answers 304).
func (s *Server) listRepoIssueEvents(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	out := make([]map[string]any, 0, len(s.issueEvents))
	for i := len(s.issueEvents) - 1; i >= 0; i-- {
		e := s.issueEvents[i]
		is := s.issues[e.issue]
		if is == nil {
			continue
		}
		m := map[string]any{"id": e.id, "node_id": fmt.Sprintf("LE_kwfake%d", e.id), "event": e.event, "actor": userJSON{e.actor},
			"commit_id": nil, "commit_url": nil, "created_at": e.at.Format(time.RFC3339), "issue": s.asMap(s.issueItem(is))}
		if e.commit != "" {
			m["commit_id"] = e.commit
			m["commit_url"] = "https://api.github.com/repos/" + s.opts.Owner + "/" + s.opts.Repo + "/commits/" + e.commit
		}
		if e.label != "" {
			m["label"] = map[string]string{"name": e.label}
		}
		out = append(out, m)
	}
	s.mu.Unlock()
	s.writeConditionalPage(w, req, out)
}

// issueItem renders an issue or pull request as the issues endpoints do; the caller holds mu.
func (s *Server) issueItem(is *Issue) issueJSON {
	kind := "issues"
	if is.PR {
		kind = "pull"
	}
	out := s.issueJSON(is, kind)
	if is.PR {
		api := "https://api.github.com/repos/" + s.opts.Owner + "/" + s.opts.Repo
		out.PullRequest = &pullRequestRef{URL: fmt.Sprintf("%s/pulls/%d", api, is.Number), HTMLURL: out.HTMLURL}
		out.Head, out.Base = nil, nil // the issues endpoints carry no branches
	}
	return out
}

// asMap turns v into the JSON object it marshals to.
func (s *Server) asMap(v any) map[string]any {
	data, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

// listIssues serves GET …/issues: the repository's issues and pull requests in state (open by
// default, closed, all) carrying every label of labels, since (updated at or after: the fake's
// items are updated when created), sorted by sort (created, the default, or updated) in direction
// (desc by default), paged, with an ETag (If-None-Match answers 304).
func (s *Server) listIssues(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			validation(w, "Issue", "since", "invalid", "", docsListIssues)
			return
		}
		since = t
	}
	s.mu.Lock()
	var ns []int
	for n, is := range s.issues {
		if (state == "all" || is.State == state) && !slices.ContainsFunc(want, func(l string) bool { return !slices.Contains(is.Labels, l) }) && !s.issueAt[n].Before(since) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns) // numbers follow creation
	if q.Get("direction") != "asc" {
		slices.Reverse(ns) // newest first, GitHub's default order
	}
	out := make([]map[string]any, 0, len(ns))
	for _, n := range ns {
		out = append(out, s.asMap(s.issueItem(s.issues[n])))
	}
	s.mu.Unlock()
	s.writeConditionalPage(w, req, out)
}

// OpenPull opens a pull request of head (a branch of the repository) into base as login, a person
// who pushed the branch, and returns its number.
func (s *Server) OpenPull(login, title, head, base string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sha(head) == "" || s.sha(base) == "" {
		return 0, fmt.Errorf("ghfake: no branch %s or %s", head, base)
	}
	n := s.newIssue(&Issue{Title: title, State: "open", PR: true, Head: head, Base: base})
	if s.issueBy == nil {
		s.issueBy = map[int]string{}
	}
	s.issueBy[n] = login
	return n, nil
}

// SetState closes or reopens item n (an issue or a pull request) as login, a person with triage
// access, recording the closed or reopened event as GitHub does.
func (s *Server) SetState(n int, login, state string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	switch {
	case is == nil:
		return fmt.Errorf("ghfake: no issue %d", n)
	case state != "open" && state != "closed":
		return fmt.Errorf("ghfake: state %q is neither open nor closed", state)
	case is.Merged:
		return fmt.Errorf("ghfake: pull request %d is merged", n)
	case is.State == state:
		return nil
	}
	is.State = state
	event := "closed"
	if state == "open" {
		event = "reopened"
	}
	s.recordIssueEvent(n, event, login, "")
	return nil
}

// SpendRateLimit counts n requests against the hour's quota, as the token's other clients would:
// the next answers report that much less remaining.
func (s *Server) SpendRateLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used += n
}
