package ghfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

const docsEnvironments = "https://docs.github.com/rest/deployments/environments"

// Environment is a deployment environment of the repository, as the fake keeps it.
type Environment struct {
	ID        int64
	Name      string
	WaitTimer int
	// Reviewers are the required reviewers' user ids, in the order given.
	Reviewers         []int64
	PreventSelfReview bool
	// BranchPolicy is nil when any branch may deploy.
	BranchPolicy *struct {
		ProtectedBranches    bool `json:"protected_branches"`
		CustomBranchPolicies bool `json:"custom_branch_policies"`
	}
}

// Environments returns a copy of the repository's environments, by name.
func (s *Server) Environments() map[string]Environment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Environment, len(s.envs))
	for k, v := range s.envs {
		e := *v
		e.Reviewers = slices.Clone(v.Reviewers)
		out[k] = e
	}
	return out
}

// routeEnvironments serves GET /repos/o/r/environments, GET and PUT
// /repos/o/r/environments/{name}, with GitHub's shapes and errors. It reports whether it
// handled the request.
func (s *Server) routeEnvironments(w http.ResponseWriter, req *http.Request, rest []string) bool {
	if len(rest) == 0 || rest[0] != "environments" || len(rest) > 2 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.envs == nil {
		s.envs = map[string]*Environment{}
	}
	m := req.Method
	if len(rest) == 1 {
		if m != http.MethodGet {
			return false
		}
		names := make([]string, 0, len(s.envs))
		for n := range s.envs {
			names = append(names, n)
		}
		slices.Sort(names)
		list := []any{}
		for _, n := range names {
			list = append(list, s.envJSON(s.envs[n]))
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "environments": list})
		return true
	}
	name, err := url.PathUnescape(rest[1])
	if err != nil || name == "" {
		writeError(w, http.StatusNotFound, "Not Found", docsEnvironments+"#get-an-environment")
		return true
	}
	key := strings.ToLower(name) // GitHub's environment names are case-insensitive
	switch m {
	case http.MethodGet:
		e, ok := s.envs[key]
		if !ok {
			writeError(w, http.StatusNotFound, "Not Found", docsEnvironments+"#get-an-environment")
			return true
		}
		writeJSON(w, http.StatusOK, s.envJSON(e))
	case http.MethodPut:
		docs := docsEnvironments + "#create-or-update-an-environment"
		var body struct {
			WaitTimer *int `json:"wait_timer"`
			Reviewers []struct {
				Type string `json:"type"`
				ID   int64  `json:"id"`
			} `json:"reviewers"`
			PreventSelfReview *bool `json:"prevent_self_review"`
			BranchPolicy      *struct {
				ProtectedBranches    bool `json:"protected_branches"`
				CustomBranchPolicies bool `json:"custom_branch_policies"`
			} `json:"deployment_branch_policy"`
		}
		if req.ContentLength != 0 {
			if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
				writeError(w, http.StatusBadRequest, "Problems parsing JSON", docs)
				return true
			}
		}
		if len(name) > 255 || strings.ContainsAny(name, "/\\:*?\"<>|,") {
			validation(w, "Environment", "name", "invalid", "name is invalid", docs)
			return true
		}
		if body.WaitTimer != nil && (*body.WaitTimer < 0 || *body.WaitTimer > 43200) {
			validation(w, "Environment", "wait_timer", "invalid", "wait_timer must be between 0 and 43200 minutes", docs)
			return true
		}
		if len(body.Reviewers) > 6 {
			validation(w, "Environment", "reviewers", "invalid", "at most 6 reviewers may be required", docs)
			return true
		}
		if bp := body.BranchPolicy; bp != nil && bp.ProtectedBranches == bp.CustomBranchPolicies {
			validation(w, "Environment", "deployment_branch_policy", "invalid", "exactly one of protected_branches and custom_branch_policies must be true", docs)
			return true
		}
		e, ok := s.envs[key]
		if !ok {
			s.nextID++
			e = &Environment{ID: s.nextID, Name: name}
			s.envs[key] = e
		}
		// PUT replaces the protection rules with the body's.
		e.WaitTimer, e.Reviewers, e.PreventSelfReview, e.BranchPolicy = 0, nil, false, body.BranchPolicy
		if body.WaitTimer != nil {
			e.WaitTimer = *body.WaitTimer
		}
		if body.PreventSelfReview != nil {
			e.PreventSelfReview = *body.PreventSelfReview
		}
		for _, r := range body.Reviewers {
			if r.Type != "User" && r.Type != "Team" {
				validation(w, "Environment", "reviewers", "invalid", "reviewer type must be User or Team", docs)
				return true
			}
			e.Reviewers = append(e.Reviewers, r.ID)
		}
		writeJSON(w, http.StatusOK, s.envJSON(e))
	default:
		return false
	}
	return true
}

// envJSON is GitHub's environment object. Reviewers are reported by id (the fake knows a user's
// login only from the collaborators; GitHub reports the user object).
func (s *Server) envJSON(e *Environment) map[string]any {
	var rules []any
	if e.WaitTimer > 0 {
		rules = append(rules, map[string]any{"id": e.ID*10 + 1, "type": "wait_timer", "wait_timer": e.WaitTimer})
	}
	if len(e.Reviewers) > 0 {
		var rs []any
		for _, id := range e.Reviewers {
			u := map[string]any{"id": id, "type": "User"}
			for l := range s.opts.Collaborators {
				if UserID(l) == id {
					u["login"] = l
				}
			}
			rs = append(rs, map[string]any{"type": "User", "reviewer": u})
		}
		rules = append(rules, map[string]any{"id": e.ID*10 + 2, "type": "required_reviewers", "prevent_self_review": e.PreventSelfReview, "reviewers": rs})
	}
	if e.BranchPolicy != nil {
		rules = append(rules, map[string]any{"id": e.ID*10 + 3, "type": "branch_policy"})
	}
	if rules == nil {
		rules = []any{}
	}
	out := map[string]any{"id": e.ID, "name": e.Name, "url": strings.TrimSuffix(s.URL, "/") + "/repos/" + s.opts.Owner + "/" + s.opts.Repo + "/environments/" + url.PathEscape(e.Name),
		"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z", "protection_rules": rules, "deployment_branch_policy": nil}
	if e.BranchPolicy != nil {
		out["deployment_branch_policy"] = e.BranchPolicy
	}
	return out
}
