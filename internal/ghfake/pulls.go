package ghfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The code host: when Options.GitDir names a bare repository, its branches are the repository's
// branches (a push to it is a push to GitHub), and the fake serves issues, pull requests, labels,
// comments, reviews, commit statuses and branch protection over it, with GitHub's shapes and
// error codes (docs.github.com/rest: pulls, issues, commits/statuses, branches/branch-protection).

const (
	docsPulls      = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
	docsIssues     = "https://docs.github.com/rest/issues/comments"
	docsLabels     = "https://docs.github.com/rest/issues/labels"
	docsStatuses   = "https://docs.github.com/rest/commits/statuses#create-a-commit-status"
	docsReviews    = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
	docsProtection = "https://docs.github.com/rest/branches/branch-protection"
)

// Issue is an issue or a pull request as the fake holds it (they share numbers, as on GitHub).
type Issue struct {
	Number int
	Title  string
	Body   string
	State  string
	Labels []string
	// Comments are the bodies of its comments, in order; CommentBy their authors' logins ("" is
	// github-actions[bot], the job token's identity) and CommentIDs their ids, unique in the fake.
	Comments   []string
	CommentBy  []string
	CommentIDs []int64
	// PR: the head and base branches; Reviews the bodies of its reviews. HeadOwner owns the fork
	// the head branch is on ("" when it is on the repository itself: forks.go).
	PR         bool
	Head, Base string
	HeadOwner  string
	Reviews    []string
	// AutoMerge is whether auto-merge is armed (graphql.go), AutoMergeMethod its merge method
	// as the REST API names it (merge, squash, rebase), and AutoMergeBy who armed it (the
	// token's writer: "" for github-actions[bot]), who merges it.
	AutoMerge       bool
	AutoMergeMethod string
	AutoMergeBy     string
	// Merged is set once the pull request merged (automerge.go): by MergedBy, as MergeCommit,
	// from its head MergedHead.
	Merged                            bool
	MergedBy, MergeCommit, MergedHead string
}

// Status is a commit status.
type Status struct {
	State, Context, Description, TargetURL string
}

// Protection is a branch's protection, as far as the fake enforces it.
type Protection struct {
	// Contexts are the required status checks; Strict requires the head to be up to date.
	Contexts []string
	Strict   bool
}

// AddIssue opens an issue and returns its number.
func (s *Server) AddIssue(title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newIssue(&Issue{Title: title, Body: body, State: "open"})
}

func (s *Server) newIssue(is *Issue) int {
	if s.issues == nil {
		s.issues = map[int]*Issue{}
	}
	n := len(s.issues) + 1
	is.Number = n
	s.issues[n] = is
	if s.issueAt == nil {
		s.issueAt = map[int]time.Time{}
	}
	s.issueAt[n] = s.opts.Now().UTC().Truncate(time.Second)
	return n
}

// Issue returns a copy of issue or pull request n.
func (s *Server) Issue(n int) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, ok := s.issues[n]
	if !ok {
		return Issue{}, false
	}
	c := *is
	c.Labels, c.Comments, c.Reviews = slices.Clone(is.Labels), slices.Clone(is.Comments), slices.Clone(is.Reviews)
	c.CommentBy, c.CommentIDs = slices.Clone(is.CommentBy), slices.Clone(is.CommentIDs)
	return c, true
}

// AddComment posts body on item n as login (a person's comment, which the fleet's token cannot
// write), returning its id.
func (s *Server) AddComment(n int, login, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		return 0, fmt.Errorf("ghfake: no issue %d", n)
	}
	return s.addComment(is, login, body), nil
}

// addComment appends a comment to is; the caller holds mu.
func (s *Server) addComment(is *Issue, login, body string) int64 {
	for len(is.CommentBy) < len(is.Comments) { // comments made before authors were kept
		is.CommentBy = append(is.CommentBy, "")
	}
	for len(is.CommentIDs) < len(is.Comments) {
		s.commentSeq++
		is.CommentIDs = append(is.CommentIDs, 700_000+s.commentSeq)
	}
	s.commentSeq++
	id := 700_000 + s.commentSeq
	is.Comments, is.CommentBy, is.CommentIDs = append(is.Comments, body), append(is.CommentBy, login), append(is.CommentIDs, id)
	if s.commentAt == nil {
		s.commentAt = map[int64][2]time.Time{}
	}
	now := s.opts.Now().UTC().Truncate(time.Second)
	s.commentAt[id] = [2]time.Time{now, now}
	return id
}

// DeleteComment removes comment id (GitHub's DELETE of an issue comment, which a token with
// issues: write may do).
func (s *Server) DeleteComment(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.issues {
		for i, cid := range is.CommentIDs {
			if cid == id {
				is.Comments = append(is.Comments[:i], is.Comments[i+1:]...)
				is.CommentIDs = append(is.CommentIDs[:i], is.CommentIDs[i+1:]...)
				if i < len(is.CommentBy) {
					is.CommentBy = append(is.CommentBy[:i], is.CommentBy[i+1:]...)
				}
				delete(s.commentAt, id)
				return nil
			}
		}
	}
	return fmt.Errorf("ghfake: no comment %d", id)
}

// commentNode is an issue comment's GraphQL node id.
func commentNode(id int64) string { return "IC_kwfake" + strconv.FormatInt(id, 10) }

// EditComment replaces the body of comment id (GitHub's PATCH of an issue comment, which its
// author, the bot's token included, may do): its updated_at moves on, its created_at stays.
func (s *Server) EditComment(id int64, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.issues {
		for i, cid := range is.CommentIDs {
			if cid == id {
				is.Comments[i] = body
				at := s.commentAt[id]
				at[1] = at[0].Add(time.Minute)
				if now := s.opts.Now().UTC().Truncate(time.Second); now.After(at[1]) {
					at[1] = now
				}
				s.commentAt[id] = at
				return nil
			}
		}
	}
	return fmt.Errorf("ghfake: no comment %d", id)
}

// Pulls returns the numbers of the pull requests, in order.
func (s *Server) Pulls() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for n, is := range s.issues {
		if is.PR {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Statuses returns the statuses posted on sha, in order.
func (s *Server) Statuses(sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses[sha])
}

// Protect sets branch's protection, as PUT …/branches/{branch}/protection does.
func (s *Server) Protect(branch string, p Protection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setProtection(branch, FullProtection{Contexts: p.Contexts, Strict: p.Strict, RequiredApprovingReviews: -1})
}

// Mergeable reports whether pull request n may merge into its base under the base's
// protection: every required context's latest status on the head is success, and, when strict,
// the head contains the base. The reason says what blocks it.
func (s *Server) Mergeable(n int) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, ok := s.issues[n]
	if !ok || !is.PR {
		return false, "no such pull request"
	}
	return s.mergeable(is)
}

// mergeable is Mergeable of is; the caller holds mu.
func (s *Server) mergeable(is *Issue) (bool, string) {
	if is.Merged {
		return false, "it is merged"
	}
	head := s.headSHA(is)
	if head == "" {
		return false, "the head branch is gone"
	}
	p := s.protection[is.Base]
	if p == nil {
		return false, "the base branch is not protected: anything could merge"
	}
	for _, ctx := range p.Contexts {
		if st := s.latest(head, ctx); st != "success" {
			return false, fmt.Sprintf("required check %s is %q on %s", ctx, st, head)
		}
	}
	if s.git("merge-base", "--is-ancestor", "refs/heads/"+is.Base, head) != nil {
		if p.Strict {
			return false, "the head is not up to date with " + is.Base
		}
		if s.mergeTree("refs/heads/"+is.Base, head) == "" {
			return false, "the head conflicts with " + is.Base
		}
	}
	return true, ""
}

// latest is the state of the newest status of context on sha; the caller holds mu.
func (s *Server) latest(sha, context string) string {
	st := ""
	for _, x := range s.statuses[sha] {
		if x.Context == context {
			st = x.State
		}
	}
	return st
}

// sha resolves a branch of the bare repository ("" when it does not exist).
func (s *Server) sha(branch string) string {
	return s.refSHA("refs/heads/" + branch)
}

// refSHA resolves a ref of the bare repository to its commit ("" when it does not exist).
func (s *Server) refSHA(ref string) string {
	if s.opts.GitDir == "" {
		return ""
	}
	out, err := exec.Command("git", "--git-dir", s.opts.GitDir, "rev-parse", "--verify", "--quiet", ref+"^{commit}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (s *Server) git(args ...string) error {
	return exec.Command("git", append([]string{"--git-dir", s.opts.GitDir}, args...)...).Run()
}

type userJSON struct {
	Login string `json:"login"`
}

type refJSON struct {
	Ref   string   `json:"ref"`
	SHA   string   `json:"sha"`
	Label string   `json:"label"`
	Repo  repoJSON `json:"repo"`
}

type labelJSON struct {
	Name string `json:"name"`
}

type issueJSON struct {
	// CreatedAt and AuthorAssociation are answered by every endpoint; PullRequest only by
	// the issues endpoints, for an item that is a pull request.
	CreatedAt         string          `json:"created_at,omitempty"`
	AuthorAssociation string          `json:"author_association"`
	PullRequest       *pullRequestRef `json:"pull_request,omitempty"`
	Number            int             `json:"number"`
	NodeID            string          `json:"node_id"`
	Title             string          `json:"title"`
	Body              string          `json:"body"`
	State             string          `json:"state"`
	Labels            []labelJSON     `json:"labels"`
	User              userJSON        `json:"user"`
	HTMLURL           string          `json:"html_url"`
	Head              *refJSON        `json:"head,omitempty"`
	Base              *refJSON        `json:"base,omitempty"`
	// AutoMerge is a pull request's auto_merge: null unless auto-merge is armed
	// (docs.github.com/rest/pulls/pulls#get-a-pull-request).
	AutoMerge *autoMergeJSON `json:"auto_merge,omitempty"`
	// Merged, MergedBy and MergeCommitSHA are a pull request's merged, merged_by and
	// merge_commit_sha (null until it merged).
	Merged         *bool     `json:"merged,omitempty"`
	MergedBy       *userJSON `json:"merged_by,omitempty"`
	MergeCommitSHA string    `json:"merge_commit_sha,omitempty"`
}

// autoMergeJSON is a pull request's auto_merge object.
type autoMergeJSON struct {
	EnabledBy     userJSON `json:"enabled_by"`
	MergeMethod   string   `json:"merge_method"`
	CommitTitle   string   `json:"commit_title"`
	CommitMessage string   `json:"commit_message"`
}

// issueJSON renders an issue or pull request; the caller holds mu.
func (s *Server) issueJSON(is *Issue, kind string) issueJSON {
	by := s.issueBy[is.Number]
	login := by
	if login == "" {
		login = BotLogin
	}
	out := issueJSON{Number: is.Number, NodeID: nodeID(is.Number), Title: is.Title, Body: is.Body, State: is.State, User: userJSON{login},
		HTMLURL: fmt.Sprintf("https://github.com/%s/%s/%s/%d", s.opts.Owner, s.opts.Repo, kind, is.Number), Labels: []labelJSON{},
		AuthorAssociation: s.association(by)}
	if at, ok := s.issueAt[is.Number]; ok {
		out.CreatedAt = at.Format(time.RFC3339)
	}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, labelJSON{l})
	}
	if is.PR {
		repo := s.repoJSON()
		out.Head = s.headRef(is)
		out.Base = &refJSON{Ref: is.Base, SHA: s.sha(is.Base), Label: s.opts.Owner + ":" + is.Base, Repo: repo}
		if is.AutoMerge {
			out.AutoMerge = &autoMergeJSON{EnabledBy: userJSON{loginOrBot(is.AutoMergeBy)}, MergeMethod: is.AutoMergeMethod}
		}
		if kind == "pull" {
			mergedJSON(is, &out)
		}
	}
	return out
}

// readBody decodes a JSON request body into v, answering 400 as GitHub does when it cannot.
func readBody(w http.ResponseWriter, req *http.Request, v any, docs string) bool {
	data, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil || json.Unmarshal(data, v) != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", docs)
		return false
	}
	return true
}

// validation writes GitHub's 422 Validation Failed with one error.
func validation(w http.ResponseWriter, resource, field, code, message, docs string) {
	e := map[string]string{"resource": resource, "code": code}
	if field != "" {
		e["field"] = field
	}
	if message != "" {
		e["message"] = message
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []any{e}, "documentation_url": docs, "status": "422"})
}

// getPull serves GET …/pulls/{n}.
func (s *Server) getPull(w http.ResponseWriter, req *http.Request) {
	is := s.pull(w, req.PathValue("n"), docsPulls)
	if is == nil {
		return
	}
	s.mu.Lock()
	out := s.issueJSON(is, "pull")
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// updatePull serves PATCH …/pulls/{n}: its title, body and base.
func (s *Server) updatePull(w http.ResponseWriter, req *http.Request) {
	is := s.pull(w, req.PathValue("n"), docsPulls)
	if is == nil {
		return
	}
	var body struct {
		Title, Body, Base *string
	}
	if !readBody(w, req, &body, docsPulls) {
		return
	}
	s.mu.Lock()
	if body.Base != nil && *body.Base != is.Base && s.sha(*body.Base) == "" {
		s.mu.Unlock()
		validation(w, "PullRequest", "base", "invalid", "", docsPulls)
		return
	}
	if body.Title != nil {
		is.Title = *body.Title
	}
	if body.Body != nil {
		is.Body = *body.Body
	}
	if body.Base != nil && *body.Base != is.Base {
		s.changeBase(is, *body.Base)
	}
	out := s.issueJSON(is, "pull")
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// createReview serves POST …/pulls/{n}/reviews.
func (s *Server) createReview(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	var body struct{ Body, Event string }
	if !readBody(w, req, &body, docsReviews) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil || !is.PR {
		writeError(w, http.StatusNotFound, "Not Found", docsReviews)
		return
	}
	if body.Event != "" && !slices.Contains([]string{"APPROVE", "REQUEST_CHANGES", "COMMENT"}, body.Event) {
		validation(w, "PullRequestReview", "event", "invalid", "", docsReviews)
		return
	}
	if (body.Event == "COMMENT" || body.Event == "REQUEST_CHANGES") && body.Body == "" {
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity: Review Comment is missing a body", docsReviews)
		return
	}
	is.Reviews = append(is.Reviews, body.Body)
	state := map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING"}[body.Event]
	r := s.addReview(n, BotLogin, state, s.headSHA(is), body.Body)
	writeJSON(w, http.StatusOK, r.json())
}

// listComments serves GET …/issues/{n}/comments (through issueChild, reviews.go).
func (s *Server) listComments(w http.ResponseWriter, num string) {
	n, _ := strconv.Atoi(num)
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsIssues)
		return
	}
	out := []map[string]any{}
	for i, c := range is.Comments {
		by, id := BotLogin, int64(i+1)
		if i < len(is.CommentBy) && is.CommentBy[i] != "" {
			by = is.CommentBy[i]
		}
		if i < len(is.CommentIDs) {
			id = is.CommentIDs[i]
		}
		cm := map[string]any{"id": id, "node_id": commentNode(id), "body": c, "user": userJSON{by}}
		if at, ok := s.commentAt[id]; ok {
			cm["created_at"], cm["updated_at"] = at[0].Format(time.RFC3339), at[1].Format(time.RFC3339)
		}
		out = append(out, cm)
	}
	writeJSON(w, http.StatusOK, out)
}

// createComment serves POST …/issues/{n}/comments.
func (s *Server) createComment(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsIssues)
		return
	}
	var body struct{ Body *string }
	if !readBody(w, req, &body, docsIssues) {
		return
	}
	if body.Body == nil || *body.Body == "" {
		validation(w, "IssueComment", "body", "missing_field", "", docsIssues)
		return
	}
	by := s.writerOf(req)
	id := s.addComment(is, by, *body.Body)
	if by == "" {
		by = BotLogin
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "body": *body.Body, "user": userJSON{by}, "author_association": s.association(by)})
}

// addLabels serves POST …/issues/{n}/labels.
func (s *Server) addLabels(w http.ResponseWriter, req *http.Request) {
	n, _ := strconv.Atoi(req.PathValue("n"))
	// GitHub takes {"labels": [...]} or the bare array (go-github sends the array).
	var body struct{ Labels []string }
	data, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil || (json.Unmarshal(data, &body) != nil && json.Unmarshal(data, &body.Labels) != nil) {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", docsLabels)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsLabels)
		return
	}
	for _, l := range body.Labels {
		if !slices.Contains(is.Labels, l) {
			is.Labels = append(is.Labels, l)
			s.recordIssueEvent(n, "labeled", s.writerOf(req), l)
		}
	}
	out := []labelJSON{}
	for _, l := range is.Labels {
		out = append(out, labelJSON{l})
	}
	writeJSON(w, http.StatusOK, out)
}

// combinedStatus serves GET …/commits/{ref}/status: the latest status of each context.
func (s *Server) combinedStatus(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sha := req.PathValue("ref")
	if len(sha) != 40 {
		sha = s.sha(sha)
	}
	var out []map[string]string
	seen := map[string]bool{}
	list := s.statuses[sha]
	for i := len(list) - 1; i >= 0; i-- {
		if !seen[list[i].Context] {
			seen[list[i].Context] = true
			out = append(out, map[string]string{"state": list[i].State, "context": list[i].Context, "description": list[i].Description, "target_url": list[i].TargetURL})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "statuses": out, "total_count": len(out)})
}

func (s *Server) listPulls(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	s.mu.Lock()
	out := []map[string]any{}
	var nums []int
	for n, is := range s.issues {
		if is.PR && (state == "all" || is.State == state) {
			if h := q.Get("head"); h != "" && !s.headMatches(is, h) {
				continue
			}
			if b := q.Get("base"); b != "" && b != is.Base {
				continue
			}
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums {
		out = append(out, s.asMap(s.issueJSON(s.issues[n], "pull")))
	}
	s.mu.Unlock()
	s.writeConditionalPage(w, req, out) // paged, with an ETag (issueevents.go)
}

func (s *Server) createPull(w http.ResponseWriter, req *http.Request) {
	var body struct{ Title, Head, Base, Body string }
	if !readBody(w, req, &body, docsPulls) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, branch := s.splitHead(body.Head)
	is := &Issue{Title: body.Title, Body: body.Body, State: "open", PR: true, Head: branch, HeadOwner: owner, Base: body.Base}
	head := s.headSHA(is)
	switch {
	case body.Title == "":
		validation(w, "PullRequest", "title", "missing_field", "", docsPulls)
		return
	case head == "":
		validation(w, "PullRequest", "head", "invalid", "", docsPulls)
		return
	case s.sha(body.Base) == "":
		validation(w, "PullRequest", "base", "invalid", "", docsPulls)
		return
	}
	for _, x := range s.issues {
		// One open pull request per head (its repository and branch) and base.
		if x.PR && x.State == "open" && x.Head == branch && strings.EqualFold(x.HeadOwner, owner) && x.Base == body.Base {
			validation(w, "PullRequest", "", "custom", "A pull request already exists for "+s.headOwner(is)+":"+branch+".", docsPulls)
			return
		}
	}
	if s.git("merge-base", "--is-ancestor", head, "refs/heads/"+body.Base) == nil {
		validation(w, "PullRequest", "", "custom", "No commits between "+body.Base+" and "+body.Head, docsPulls)
		return
	}
	n := s.newIssue(is)
	// Opened by whom the token is (a person's token: that person; the job token: the bot).
	if by := s.writerOf(req); by != "" {
		if s.issueBy == nil {
			s.issueBy = map[int]string{}
		}
		s.issueBy[n] = by
	}
	s.pullRefs()
	writeJSON(w, http.StatusCreated, s.issueJSON(is, "pull"))
}

// createStatus serves POST …/statuses/{sha}.
func (s *Server) createStatus(w http.ResponseWriter, req *http.Request) {
	sha := req.PathValue("sha")
	var body struct {
		State, Context, Description string
		TargetURL                   string `json:"target_url"`
	}
	if !readBody(w, req, &body, docsStatuses) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains([]string{"error", "failure", "pending", "success"}, body.State) {
		validation(w, "Status", "state", "custom", "state is not included in the list", docsStatuses)
		return
	}
	if s.opts.GitDir == "" || s.git("cat-file", "-e", sha+"^{commit}") != nil || len(sha) < 40 {
		validation(w, "Status", "sha", "custom", "No commit found for SHA: "+sha, docsStatuses)
		return
	}
	if body.Context == "" {
		body.Context = "default"
	}
	if s.statuses == nil {
		s.statuses = map[string][]Status{}
	}
	st := Status{State: body.State, Context: body.Context, Description: body.Description, TargetURL: body.TargetURL}
	s.statuses[sha] = append(s.statuses[sha], st)
	s.autoMerge() // automerge.go
	writeJSON(w, http.StatusCreated, map[string]any{"state": st.State, "context": st.Context, "description": st.Description, "target_url": st.TargetURL})
}
