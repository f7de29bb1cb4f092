package ghfake

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A pull request's reviews and files, and a commit's statuses, as GitHub lists them:
//   - GET …/pulls/{n}/reviews (https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request):
//     oldest first, each with its author, state (APPROVED, CHANGES_REQUESTED, COMMENTED,
//     DISMISSED, PENDING) and the commit it reviewed;
//   - GET …/pulls/{n}/files (https://docs.github.com/rest/pulls/pulls#list-pull-requests-files):
//     the diff of the head from the merge base with the base, renames with previous_filename,
//     3,000 files at most;
//   - GET …/commits/{ref}/statuses (https://docs.github.com/rest/commits/statuses#list-commit-statuses-for-a-reference):
//     newest first.
//
// AddReview and DismissReview stand for a person acting in GitHub's UI.

const (
	docsListReviews = "https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request"
	docsPullFiles   = "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files"
	docsListStatus  = "https://docs.github.com/rest/commits/statuses#list-commit-statuses-for-a-reference"
	// maxPullFiles is the most files GitHub lists for a pull request.
	maxPullFiles = 3000
)

// BotLogin is the author of what a workflow's token writes.
const BotLogin = "github-actions[bot]"

type review struct {
	ID                   int64
	Login, State, Commit string
	Body                 string
	Submitted            time.Time
}

func (r review) json() map[string]any {
	out := map[string]any{"id": r.ID, "user": userJSON{r.Login}, "state": r.State, "commit_id": r.Commit, "body": r.Body}
	if r.State != "PENDING" {
		out["submitted_at"] = r.Submitted.Format(time.RFC3339)
	}
	return out
}

// baseChange is a base_ref_changed event of a pull request's timeline.
type baseChange struct {
	From, To string
	At       time.Time
}

// changeBase retargets pull request is onto base, as PATCH …/pulls/{n} with base does, and
// records the timeline's base_ref_changed event; the caller holds mu.
func (s *Server) changeBase(is *Issue, base string) {
	if s.baseChanges == nil {
		s.baseChanges = map[int][]baseChange{}
	}
	s.baseChanges[is.Number] = append(s.baseChanges[is.Number], baseChange{From: is.Base, To: base, At: s.opts.Now().UTC()})
	is.Base = base
}

// SetBase retargets pull request n onto branch base, as its author may in GitHub's UI.
func (s *Server) SetBase(n int, base string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil || !is.PR {
		return fmt.Errorf("#%d is not a pull request", n)
	}
	if s.sha(base) == "" {
		return fmt.Errorf("no branch %s", base)
	}
	if base != is.Base {
		s.changeBase(is, base)
	}
	return nil
}

// addReview records a review of pull request n; the caller holds mu.
func (s *Server) addReview(n int, login, state, commit, body string) review {
	if s.reviews == nil {
		s.reviews = map[int][]review{}
	}
	s.reviewSeq++
	r := review{ID: 80000 + s.reviewSeq, Login: login, State: state, Commit: commit, Body: body, Submitted: s.opts.Now().UTC()}
	s.reviews[n] = append(s.reviews[n], r)
	return r
}

// AddReview records login's submitted review of pull request n's current head (state APPROVED,
// CHANGES_REQUESTED or COMMENTED) and returns its id, as a person's review in GitHub's UI.
func (s *Server) AddReview(n int, login, state string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	if is == nil || !is.PR {
		return 0, fmt.Errorf("#%d is not a pull request", n)
	}
	if !slices.Contains([]string{"APPROVED", "CHANGES_REQUESTED", "COMMENTED"}, state) {
		return 0, fmt.Errorf("review state %q", state)
	}
	return s.addReview(n, login, state, s.headSHA(is), "").ID, nil
}

// DismissReview dismisses review id of pull request n (its state becomes DISMISSED).
func (s *Server) DismissReview(n int, id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.reviews[n] {
		if r.ID == id {
			s.reviews[n][i].State = "DISMISSED"
			return true
		}
	}
	return false
}

// issueChild serves GET …/issues/{a}/{b}: one issue comment by id (issues/comments/{id},
// https://docs.github.com/rest/issues/comments#get-an-issue-comment), an issue's comments
// (issues/{n}/comments, pulls.go) or its timeline (issues/{n}/timeline). One pattern with this
// small dispatcher, because ServeMux refuses "issues/comments/{id}" beside "issues/{n}/comments"
// (both match issues/comments/comments and neither is more specific); the comment by id wins.
func (s *Server) issueChild(w http.ResponseWriter, req *http.Request) {
	a, b := req.PathValue("a"), req.PathValue("b")
	switch {
	case a == "comments":
		s.getComment(w, b)
	case b == "comments":
		s.listComments(w, a)
	case b == "timeline":
		s.listTimeline(w, req, a)
	default:
		s.notFound(w, req)
	}
}

// pull is pull request n, or nil after answering 404.
func (s *Server) pull(w http.ResponseWriter, num, docs string) *Issue {
	n, err := strconv.Atoi(num)
	s.mu.Lock()
	is := s.issues[n]
	s.mu.Unlock()
	if err != nil || is == nil || !is.PR {
		writeError(w, http.StatusNotFound, "Not Found", docs)
		return nil
	}
	return is
}

// listReviews serves GET …/pulls/{n}/reviews.
func (s *Server) listReviews(w http.ResponseWriter, req *http.Request) {
	is := s.pull(w, req.PathValue("n"), docsListReviews)
	if is == nil {
		return
	}
	s.mu.Lock()
	out := []map[string]any{}
	for _, r := range s.reviews[is.Number] {
		m := r.json()
		m["author_association"] = s.association(r.Login)
		out = append(out, m)
	}
	s.mu.Unlock()
	s.writeConditionalPage(w, req, out) // with an ETag (repocomments.go)
}

// listPullFiles serves GET …/pulls/{n}/files.
func (s *Server) listPullFiles(w http.ResponseWriter, req *http.Request) {
	is := s.pull(w, req.PathValue("n"), docsPullFiles)
	if is == nil {
		return
	}
	s.mu.Lock()
	base, head := s.sha(is.Base), s.headSHA(is)
	s.mu.Unlock()
	out, err := s.changedFiles(base, head, maxPullFiles)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the fake could not diff: "+err.Error(), docsPullFiles)
		return
	}
	writePage(w, req, out)
}

// listStatuses serves GET …/commits/{ref}/statuses.
func (s *Server) listStatuses(w http.ResponseWriter, req *http.Request) {
	ref := req.PathValue("ref")
	s.mu.Lock()
	sha := ref
	if len(sha) != 40 {
		sha = s.sha(ref)
	}
	list := s.statuses[sha]
	out := []map[string]any{}
	for i := len(list) - 1; i >= 0; i-- {
		st := list[i]
		out = append(out, map[string]any{"state": st.State, "context": st.Context, "description": st.Description, "target_url": st.TargetURL})
	}
	s.mu.Unlock()
	writePage(w, req, out)
}

// writePage answers one page of a list (per_page, at most 100; page), with a Link header.
func writePage(w http.ResponseWriter, req *http.Request, all []map[string]any) {
	q := req.URL.Query()
	perPage, page := 30, 1
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 {
		perPage = min(n, 100)
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}
	if l := linkHeader(req, page, (len(all)+perPage-1)/perPage); l != "" {
		w.Header().Set("Link", l)
	}
	out := []map[string]any{}
	if from := (page - 1) * perPage; from < len(all) {
		out = all[from:min(from+perPage, len(all))]
	}
	writeJSON(w, http.StatusOK, out)
}

// getComment answers one issue comment by id, with the issue it is on (issue_url).
func (s *Server) getComment(w http.ResponseWriter, num string) {
	id, err := strconv.ParseInt(num, 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, is := range s.issues {
		for i, cid := range is.CommentIDs {
			if err != nil || cid != id {
				continue
			}
			by := BotLogin
			if i < len(is.CommentBy) && is.CommentBy[i] != "" {
				by = is.CommentBy[i]
			}
			c := map[string]any{"id": id, "node_id": commentNode(id), "body": is.Comments[i], "user": userJSON{by},
				"issue_url": fmt.Sprintf("https://api.github.com/repos/%s/%s/issues/%d", s.opts.Owner, s.opts.Repo, n)}
			if at, ok := s.commentAt[id]; ok {
				c["created_at"], c["updated_at"] = at[0].Format(time.RFC3339), at[1].Format(time.RFC3339)
			}
			writeJSON(w, http.StatusOK, c)
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/issues/comments#get-an-issue-comment")
}

// listTimeline answers GET …/issues/{n}/timeline
// (https://docs.github.com/rest/issues/timeline): the fake records base_ref_changed events only.
func (s *Server) listTimeline(w http.ResponseWriter, req *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	s.mu.Lock()
	out := []map[string]any{}
	for _, c := range s.baseChanges[n] {
		out = append(out, map[string]any{"event": "base_ref_changed", "created_at": c.At.Format(time.RFC3339), "actor": userJSON{"someone"}})
	}
	_, ok := s.issues[n]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/issues/timeline")
		return
	}
	writePage(w, req, out)
}

// maxCompareFiles is the most files GitHub's compare lists.
const maxCompareFiles = 300

// compare answers GET …/compare/{base}...{head}
// (https://docs.github.com/rest/commits/commits#compare-two-commits): the files the head changes
// from the merge base of both, 300 at most.
func (s *Server) compare(w http.ResponseWriter, req *http.Request) {
	basehead := req.PathValue("basehead")
	const docs = "https://docs.github.com/rest/commits/commits#compare-two-commits"
	base, head, ok := strings.Cut(basehead, "...")
	s.mu.Lock()
	resolve := func(ref string) string {
		if len(ref) == 40 && s.git("cat-file", "-e", ref+"^{commit}") == nil {
			return ref
		}
		return s.sha(ref)
	}
	b, h := resolve(base), resolve(head)
	s.mu.Unlock()
	if !ok || b == "" || h == "" {
		writeError(w, http.StatusNotFound, "Not Found", docs)
		return
	}
	files, err := s.changedFiles(b, h, maxCompareFiles)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the fake could not diff: "+err.Error(), docs)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ahead", "files": files, "merge_base_commit": map[string]any{}})
}

// changedFiles is GitHub's file entries of what head changes from the merge base of base and
// head (base...head), max at most.
func (s *Server) changedFiles(base, head string, max int) ([]map[string]any, error) {
	raw, err := exec.Command("git", "--git-dir", s.opts.GitDir, "diff", "--name-status", "-M", "-z", base+"..."+head).Output()
	if err != nil {
		return nil, err
	}
	return nameStatus(raw, max), nil
}

// nameStatus turns git diff --name-status -M -z output into GitHub's file entries, max at most.
func nameStatus(raw []byte, max int) []map[string]any {
	out := []map[string]any{}
	fields := bytes.Split(bytes.TrimSuffix(raw, []byte{0}), []byte{0})
	for i := 0; i < len(fields) && len(out) < max; i++ {
		st := string(fields[i])
		if st == "" || i+1 >= len(fields) {
			break
		}
		f := map[string]any{"status": map[byte]string{'A': "added", 'D': "removed", 'M': "modified", 'R': "renamed", 'T': "changed"}[st[0]]}
		if st[0] == 'R' && i+2 < len(fields) {
			f["previous_filename"], f["filename"] = string(fields[i+1]), string(fields[i+2])
			i += 2
		} else {
			f["filename"] = string(fields[i+1])
			i++
		}
		out = append(out, f)
	}
	return out
}
