package ghfake

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRoutingEdges pins how the router answers what it does not serve, and the paths where
// the order of the checks shows: an unknown path or method is 404 Not Found with GitHub's
// error body (never a redirect or a 405), a write by the read-only token to the repository is
// 403 before the path is looked at, another owner or repository is 404 first, a trailing slash
// is ignored, HEAD is not GET, and a path segment is decoded before the path is split.
func TestRoutingEdges(t *testing.T) {
	s, _ := codeHost(t, Options{ReadOnlyToken: "ro", Users: []string{"alice"}})
	bare := newServer(t, Options{ReadOnlyToken: "ro"})
	const (
		notFound   = `{"documentation_url":"https://docs.github.com/rest","message":"Not Found","status":"404"}`
		integ      = `{"documentation_url":"https://docs.github.com/rest","message":"Resource not accessible by integration","status":"403"}`
		artifacts  = `{"documentation_url":"https://docs.github.com/rest/actions/artifacts","message":"Resource not accessible by integration","status":"403"}`
		pat        = `{"documentation_url":"https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event","message":"Resource not accessible by personal access token","status":"403"}`
		comment404 = `{"documentation_url":"https://docs.github.com/rest/issues/comments#get-an-issue-comment","message":"Not Found","status":"404"}`
	)
	for _, c := range []struct {
		srv                *Server
		method, path, auth string
		code               int
		body               string // "" checks only the code
	}{
		{s, "GET", "/nope", "", 404, notFound},
		{s, "GET", "/", "", 404, notFound},
		{s, "DELETE", "/repos/o/r", "", 404, notFound},
		{s, "DELETE", "/repos/o/r", "ro", 403, integ},
		{s, "HEAD", "/repos/o/r", "", 404, ""},
		{s, "HEAD", "/repos/o/r", "ro", 403, ""},
		{s, "GET", "/repos/o/r/", "", 200, ""},
		{s, "GET", "//repos/o/r//", "", 200, ""},
		{s, "GET", "/repos/O/R", "", 200, ""},
		{s, "GET", "/Repos/o/r", "", 404, notFound},
		{s, "GET", "/repos/o", "", 404, notFound},
		{s, "GET", "/repos/o/r/unknown", "", 404, notFound},
		{s, "POST", "/repos/o/r/unknown", "", 404, notFound},
		{s, "POST", "/repos/o/r/unknown", "ro", 403, integ},
		{s, "POST", "/repos/x/r/pulls", "ro", 404, notFound},
		{s, "GET", "/repos/o/r//pulls", "", 404, notFound},
		{s, "GET", "/repos/o/r/actions/runs/../runs", "", 404, notFound},
		{s, "GET", "/graphql", "", 404, notFound},
		{s, "POST", "/graphql/", "", 404, notFound},
		{s, "GET", "/users/alice", "", 200, ""},
		{s, "GET", "/users/alice/", "", 200, ""},
		{s, "GET", "/users/alice/x", "", 404, notFound},
		{s, "POST", "/users/alice", "ro", 404, notFound},
		{s, "GET", "/repos/o/r/git/ref", "", 404, notFound},
		{s, "GET", "/repos/o/r/git/ref/heads", "", 404, notFound},
		{s, "GET", "/repos/o/r/git/ref/heads/main", "", 200, ""},
		{s, "GET", "/repos/o/r/git/refs/heads/main", "", 404, notFound},
		{s, "PATCH", "/repos/o/r/git/refs", "", 404, notFound},
		{s, "PATCH", "/repos/o/r/git/refs/heads", "", 404, notFound},
		{s, "PUT", "/repos/o/r/git/refs/heads/main", "", 404, notFound},
		{bare, "GET", "/repos/o/r/git/ref/heads/main", "", 404, notFound},
		{bare, "POST", "/repos/o/r/git/blobs", "ro", 403, integ},
		{s, "POST", "/repos/o/r/actions/permissions/workflow", "", 200, `{"can_approve_pull_request_reviews":false,"default_workflow_permissions":"read"}`},
		{s, "POST", "/repos/o/r/actions/permissions/workflow", "ro", 403, integ},
		{s, "GET", "/repos/o/r/issues/comments/comments", "", 404, comment404},
		{s, "PUT", "/repos/o/r/actions/runs/1/cancel", "ro", 403, integ},
		{s, "DELETE", "/repos/o/r/actions/artifacts/5", "ro", 403, artifacts},
		{s, "POST", "/repos/o/r/actions/workflows/develop.yml/dispatches", "ro", 403, pat},
		{s, "POST", "/repos/o/r/actions/runs/1/rerun", "ro", 403, integ},
		{s, "PUT", "/repos/o/r/environments/prod", "ro", 403, integ},
		{s, "GET", "/repos/o/r/branches/feature%2Fx/protection", "", 404, notFound},
		{s, "GET", "/repos/o/r/labels/a%2Fb", "", 404, notFound},
		{s, "GET", "/repos/o/r/pulls/1/reviews/extra", "", 404, notFound},
		{s, "GET", "/repos/o/r/collaborators/alice/permission", "", 200, ""},
	} {
		req, err := http.NewRequest(c.method, strings.TrimSuffix(c.srv.URL, "/")+c.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		a := tok
		if c.auth != "" {
			a = c.auth
		}
		req.Header.Set("Authorization", "Bearer "+a)
		resp, err := c.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || (c.body != "" && string(data) != c.body) {
			t.Errorf("%s %s (token %q) = %d %s, want %d %s", c.method, c.path, c.auth, resp.StatusCode, data, c.code, c.body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
	}
}
