package ghfake

import (
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
)

const (
	docsCollaborators = "https://docs.github.com/rest/collaborators/collaborators"
	docsUsers         = "https://docs.github.com/rest/users/users#get-a-user"
)

// The permissions a repository role implies, weakest first, as GitHub's collaborator list
// reports them and its permission filter compares them.
var roles = []string{"read", "triage", "write", "maintain", "admin"}

// UserID is the id the fake gives a login: stable for a login, like GitHub's.
func UserID(login string) int64 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(login)))
	return 1_000_000 + int64(h.Sum32()%90_000_000)
}

func user(login string) map[string]any {
	return map[string]any{"login": login, "id": UserID(login), "type": "User"}
}

// listCollaborators serves GET .../collaborators[?permission=], the repository's
// collaborators (Options.Collaborators).
func (s *Server) listCollaborators(w http.ResponseWriter, req *http.Request) {
	want := req.URL.Query().Get("permission")
	min := 0
	if want != "" {
		min = slices.Index(roles, want)
		if min < 0 {
			validation(w, "Collaborator", "permission", "invalid", "permission must be one of "+strings.Join(roles, ", "), docsCollaborators+"#list-repository-collaborators")
			return
		}
	}
	logins := make([]string, 0, len(s.opts.Collaborators))
	for l := range s.opts.Collaborators {
		logins = append(logins, l)
	}
	slices.Sort(logins)
	out := []map[string]any{}
	for _, l := range logins {
		role := s.opts.Collaborators[l]
		rank := slices.Index(roles, role)
		if rank < min {
			continue
		}
		u := user(l)
		perms := map[string]bool{}
		for i, r := range []string{"pull", "triage", "push", "maintain", "admin"} {
			perms[r] = i <= rank
		}
		u["permissions"], u["role_name"] = perms, role
		out = append(out, u)
	}
	writeJSON(w, http.StatusOK, out)
}

// getPermission serves GET .../collaborators/{login}/permission.
func (s *Server) getPermission(w http.ResponseWriter, req *http.Request) {
	login := req.PathValue("login")
	role, ok := s.collaborator(login)
	perm := map[string]string{"read": "read", "triage": "read", "write": "write", "maintain": "write", "admin": "admin"}[role]
	if !ok {
		role, perm = "none", "none"
	}
	writeJSON(w, http.StatusOK, map[string]any{"permission": perm, "role_name": role, "user": user(login)})
}

// collaborator is a login's role, case-insensitively as GitHub matches logins.
func (s *Server) collaborator(login string) (string, bool) {
	for l, r := range s.opts.Collaborators {
		if strings.EqualFold(l, login) {
			return r, true
		}
	}
	return "", false
}

// getUser serves GET /users/{login}: every login exists unless Options.Users is set and lacks it.
func (s *Server) getUser(w http.ResponseWriter, login string) {
	if s.opts.Users != nil && !slices.ContainsFunc(s.opts.Users, func(u string) bool { return strings.EqualFold(u, login) }) {
		if _, ok := s.collaborator(login); !ok {
			writeError(w, http.StatusNotFound, "Not Found", docsUsers)
			return
		}
	}
	writeJSON(w, http.StatusOK, user(login))
}
