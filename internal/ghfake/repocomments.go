package ghfake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// docsRepoComments is "List issue comments for a repository".
const docsRepoComments = "https://docs.github.com/rest/issues/comments#list-issue-comments-for-a-repository"

// association is the author_association GitHub reports for login on this repository: OWNER for
// its owner, COLLABORATOR for a collaborator (Options.Collaborators), NONE for anyone else and
// for the job token's bot ("" here). The caller holds mu.
func (s *Server) association(login string) string {
	switch {
	case login == "" || login == BotLogin:
		return "NONE"
	case strings.EqualFold(login, s.opts.Owner):
		return "OWNER"
	case s.opts.Collaborators[login] != "":
		return "COLLABORATOR"
	}
	return "NONE"
}

// repoComment is one issue comment as the repository-wide list answers it.
type repoComment struct {
	id      int64
	issue   int
	login   string
	body    string
	created time.Time
	updated time.Time
}

// listRepoComments serves GET …/issues/comments: every issue and pull request comment of the
// repository, sorted by sort (created, the default, or updated) in direction (asc by default;
// desc only applies with sort, as GitHub documents it), those updated at or after since only,
// paged, with a weak ETag that If-None-Match answers with 304 Not Modified.
func (s *Server) listRepoComments(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	sortBy := q.Get("sort")
	if sortBy == "" {
		sortBy = "created"
	}
	if sortBy != "created" && sortBy != "updated" {
		validation(w, "IssueComment", "sort", "invalid", "", docsRepoComments)
		return
	}
	desc := q.Get("sort") != "" && q.Get("direction") == "desc"
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			validation(w, "IssueComment", "since", "invalid", "", docsRepoComments)
			return
		}
		since = t
	}
	s.mu.Lock()
	var all []repoComment
	for n, is := range s.issues {
		for i, id := range is.CommentIDs {
			at := s.commentAt[id]
			if at[1].Before(since) {
				continue
			}
			by := ""
			if i < len(is.CommentBy) {
				by = is.CommentBy[i]
			}
			all = append(all, repoComment{id: id, issue: n, login: by, body: is.Comments[i], created: at[0], updated: at[1]})
		}
	}
	slices.SortFunc(all, func(a, b repoComment) int {
		ka, kb := a.created, b.created
		if sortBy == "updated" {
			ka, kb = a.updated, b.updated
		}
		c := ka.Compare(kb)
		if c == 0 {
			c = int(a.id - b.id)
		}
		if desc {
			c = -c
		}
		return c
	})
	out := make([]map[string]any, 0, len(all))
	api := "https://api.github.com/repos/" + s.opts.Owner + "/" + s.opts.Repo
	for _, c := range all {
		login := c.login
		if login == "" {
			login = BotLogin
		}
		out = append(out, map[string]any{
			"id": c.id, "node_id": commentNode(c.id), "body": c.body, "user": userJSON{login},
			"author_association": s.association(c.login),
			"issue_url":          fmt.Sprintf("%s/issues/%d", api, c.issue),
			"html_url":           fmt.Sprintf("https://github.com/%s/%s/issues/%d#issuecomment-%d", s.opts.Owner, s.opts.Repo, c.issue, c.id),
			"created_at":         c.created.Format(time.RFC3339), "updated_at": c.updated.Format(time.RFC3339),
		})
	}
	s.mu.Unlock()
	s.writeConditionalPage(w, req, out)
}

// writeConditionalPage is writePage with GitHub's conditional requests: the page carries a weak
// ETag of its content, and a request whose If-None-Match names it is answered 304 Not Modified
// with no body, which does not count against the rate limit.
func (s *Server) writeConditionalPage(w http.ResponseWriter, req *http.Request, all []map[string]any) {
	rec := &pageRecorder{header: http.Header{}}
	writePage(rec, req, all)
	sum := sha256.Sum256(append([]byte(rec.header.Get("Link")+"\n"), rec.body...))
	etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	if l := rec.header.Get("Link"); l != "" {
		h.Set("Link", l)
	}
	if match := req.Header.Get("If-None-Match"); match != "" && strings.TrimPrefix(match, "W/") == strings.TrimPrefix(etag, "W/") {
		s.mu.Lock()
		s.used-- // a 304 is free
		used := (s.used-1)%(quota-1) + 1
		s.mu.Unlock()
		h.Set("X-RateLimit-Remaining", strconv.Itoa(quota-used))
		h.Set("X-RateLimit-Used", strconv.Itoa(used))
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body)
}

// pageRecorder holds a page written by writePage.
type pageRecorder struct {
	header http.Header
	code   int
	body   []byte
}

func (p *pageRecorder) Header() http.Header { return p.header }
func (p *pageRecorder) WriteHeader(code int) {
	p.code = code
}
func (p *pageRecorder) Write(b []byte) (int, error) {
	p.body = append(p.body, b...)
	return len(b), nil
}
