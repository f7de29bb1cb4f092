package ghfake

import (
	"net/http"
	"strconv"
	"strings"
)

// The GraphQL the trusted jobs use, answered as GitHub does: the mutation
// enablePullRequestAutoMerge (HTTP 200, with an errors list when it is refused: auto-merge not
// allowed in the repository; a pull request already mergeable, "clean", which GitHub will not
// arm), and the query of issue comments' lastEditedAt by node id.

// nodeID is a pull request's GraphQL node id.
func nodeID(n int) string { return "PR_kwfake" + strconv.Itoa(n) }

// AutoMerge reports whether auto-merge is armed on pull request n.
func (s *Server) AutoMerge(n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issues[n]
	return is != nil && is.AutoMerge
}

func graphQLError(w http.ResponseWriter, typ, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"enablePullRequestAutoMerge": nil},
		"errors": []any{map[string]any{"type": typ, "path": []string{"enablePullRequestAutoMerge"}, "message": msg}}})
}

func (s *Server) graphql(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Query     string
		Variables map[string]any
	}
	if !readBody(w, req, &body, "https://docs.github.com/graphql") {
		return
	}
	if strings.Contains(body.Query, "lastEditedAt") {
		s.lastEdited(w, body.Variables)
		return
	}
	if !strings.Contains(body.Query, "enablePullRequestAutoMerge") {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{"message": "ghfake: only enablePullRequestAutoMerge is served"}}})
		return
	}
	id, _ := body.Variables["id"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	var is *Issue
	for _, x := range s.issues {
		if x.PR && nodeID(x.Number) == id {
			is = x
		}
	}
	switch {
	case s.readOnly(req):
		graphQLError(w, "FORBIDDEN", "Resource not accessible by integration")
	case is == nil:
		graphQLError(w, "NOT_FOUND", "Could not resolve to a node with the global id of '"+id+"'")
	case !s.settings.AllowAutoMerge:
		graphQLError(w, "UNPROCESSABLE", "Pull request Auto merge is not allowed for this repository")
	case s.protection[is.Base] == nil || len(s.protection[is.Base].Contexts) == 0:
		graphQLError(w, "UNPROCESSABLE", "Pull request is in clean status")
	case expectedHead(body.Query, body.Variables) != "" && !strings.EqualFold(expectedHead(body.Query, body.Variables), s.headSHA(is)):
		// expectedHeadOid: "The expected head OID of the pull request" (docs.github.com/graphql/reference/input-objects#enablepullrequestautomergeinput).
		graphQLError(w, "UNPROCESSABLE", "Head sha didn't match expected head sha")
	default:
		is.AutoMerge, is.AutoMergeMethod, is.AutoMergeBy = true, mergeMethod(body.Query), s.writerOf(req)
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"enablePullRequestAutoMerge": map[string]any{"pullRequest": map[string]any{"number": is.Number}}}})
	}
}

// lastEdited answers nodes(ids:) { ... on IssueComment { id lastEditedAt } }: null for a comment
// never edited, the time of its last edit otherwise, and a null node for an unknown id.
func (s *Server) lastEdited(w http.ResponseWriter, vars map[string]any) {
	ids, _ := vars["ids"].([]any)
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := []any{}
	for _, x := range ids {
		id, _ := x.(string)
		n, err := strconv.ParseInt(strings.TrimPrefix(id, "IC_kwfake"), 10, 64)
		at, ok := s.commentAt[n]
		if err != nil || !strings.HasPrefix(id, "IC_kwfake") || !ok {
			nodes = append(nodes, nil)
			continue
		}
		var edited any
		if at[1].After(at[0]) {
			edited = at[1].Format("2006-01-02T15:04:05Z")
		}
		nodes = append(nodes, map[string]any{"id": id, "lastEditedAt": edited})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"nodes": nodes}})
}

// expectedHead is the expectedHeadOid an enablePullRequestAutoMerge names: the variable it
// refers to ($name), or a literal "sha"; "" when it names none.
func expectedHead(query string, vars map[string]any) string {
	_, rest, ok := strings.Cut(query, "expectedHeadOid:")
	if !ok {
		return ""
	}
	rest = strings.TrimSpace(rest)
	if name, ok := strings.CutPrefix(rest, "$"); ok {
		end := strings.IndexFunc(name, func(r rune) bool {
			return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		})
		if end >= 0 {
			name = name[:end]
		}
		v, _ := vars[name].(string)
		return v
	}
	if lit, ok := strings.CutPrefix(rest, `"`); ok {
		v, _, _ := strings.Cut(lit, `"`)
		return v
	}
	return ""
}

// mergeMethod is the merge method an enablePullRequestAutoMerge names (mergeMethod: SQUASH), as
// the REST API names it; MERGE, GraphQL's default, when it names none.
func mergeMethod(query string) string {
	_, rest, ok := strings.Cut(query, "mergeMethod:")
	if !ok {
		return "merge"
	}
	rest = strings.TrimSpace(rest)
	end := strings.IndexFunc(rest, func(r rune) bool { return r < 'A' || r > 'Z' })
	if end < 0 {
		end = len(rest)
	}
	switch m := strings.ToLower(rest[:end]); m {
	case "squash", "rebase":
		return m
	}
	return "merge"
}
