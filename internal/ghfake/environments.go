package ghfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Deployment environments (docs.github.com/rest/deployments/environments): create or update,
// get and list, with GitHub's shapes — protection_rules of types wait_timer, required_reviewers
// and branch_policy — and its validation errors (at most 6 reviewers, a wait timer of at most
// 43200 minutes, a reviewer type of User or Team, a reviewer that exists).

const docsEnvironments = "https://docs.github.com/rest/deployments/environments"

// Environment is a deployment environment as the fake keeps it.
type Environment struct {
	Name string
	ID   int64
	// Reviewers are the required reviewers' user ids, in the order they were given.
	Reviewers         []int64
	PreventSelfReview bool
	WaitTimer         int
	CanAdminsBypass   bool
	// ProtectedBranches and CustomBranchPolicies are the deployment branch policy (both false:
	// none, any branch may deploy).
	ProtectedBranches, CustomBranchPolicies bool
}

// Environments returns the repository's environments, sorted by name.
func (s *Server) Environments() []Environment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Environment, 0, len(s.environments))
	for _, e := range s.environments {
		c := *e
		c.Reviewers = slices.Clone(e.Reviewers)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Environment) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// SetEnvironment creates or replaces an environment (a test's starting state).
func (s *Server) SetEnvironment(e Environment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putEnvironment(e)
}

func (s *Server) putEnvironment(e Environment) *Environment {
	if s.environments == nil {
		s.environments = map[string]*Environment{}
	}
	key := strings.ToLower(e.Name)
	if old, ok := s.environments[key]; ok {
		e.ID, e.Name = old.ID, old.Name
	} else if e.ID == 0 {
		e.ID = 7_000_000 + int64(len(s.environments)) + 1
	}
	s.environments[key] = &e
	return &e
}

// listEnvironments serves GET .../environments.
func (s *Server) listEnvironments(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	names := make([]string, 0, len(s.environments))
	for k := range s.environments {
		names = append(names, k)
	}
	slices.Sort(names)
	list := []any{}
	for _, k := range names {
		list = append(list, s.environmentJSON(s.environments[k]))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "environments": list})
}

// getEnvironment serves GET .../environments/{name}.
func (s *Server) getEnvironment(w http.ResponseWriter, req *http.Request) {
	name, _ := url.PathUnescape(req.PathValue("name"))
	s.mu.Lock()
	e, ok := s.environments[strings.ToLower(name)]
	var body map[string]any
	if ok {
		body = s.environmentJSON(e)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", docsEnvironments+"#get-an-environment")
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// putEnvironmentRequest serves PUT .../environments/{name}.
func (s *Server) putEnvironmentRequest(w http.ResponseWriter, req *http.Request) {
	name, _ := url.PathUnescape(req.PathValue("name"))
	const docs = docsEnvironments + "#create-or-update-an-environment"
	var body struct {
		WaitTimer         *int  `json:"wait_timer"`
		PreventSelfReview *bool `json:"prevent_self_review"`
		CanAdminsBypass   *bool `json:"can_admins_bypass"`
		Reviewers         []struct {
			Type string `json:"type"`
			ID   int64  `json:"id"`
		} `json:"reviewers"`
		DeploymentBranchPolicy *struct {
			ProtectedBranches    bool `json:"protected_branches"`
			CustomBranchPolicies bool `json:"custom_branch_policies"`
		} `json:"deployment_branch_policy"`
	}
	if req.ContentLength != 0 {
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "Problems parsing JSON", docs)
			return
		}
	}
	if name == "" || len(name) > 255 || strings.ContainsAny(name, ",") {
		validation(w, "Environment", "name", "invalid", "name is not a valid environment name", docs)
		return
	}
	e := Environment{Name: name, CanAdminsBypass: true}
	if body.WaitTimer != nil {
		if *body.WaitTimer < 0 || *body.WaitTimer > 43200 {
			validation(w, "Environment", "wait_timer", "invalid", "wait_timer must be an integer between 0 and 43200", docs)
			return
		}
		e.WaitTimer = *body.WaitTimer
	}
	if len(body.Reviewers) > 6 {
		validation(w, "Environment", "reviewers", "invalid", "reviewers can have at most 6 entries", docs)
		return
	}
	for _, r := range body.Reviewers {
		if r.Type != "User" && r.Type != "Team" {
			validation(w, "Environment", "reviewers", "invalid", "reviewer type must be one of User, Team", docs)
			return
		}
		if r.Type == "Team" || !s.knownUserID(r.ID) {
			validation(w, "Environment", "reviewers", "invalid", "reviewer not found", docs)
			return
		}
		e.Reviewers = append(e.Reviewers, r.ID)
	}
	if body.PreventSelfReview != nil {
		e.PreventSelfReview = *body.PreventSelfReview
	}
	if body.CanAdminsBypass != nil {
		e.CanAdminsBypass = *body.CanAdminsBypass
	}
	if p := body.DeploymentBranchPolicy; p != nil {
		if p.ProtectedBranches == p.CustomBranchPolicies {
			validation(w, "Environment", "deployment_branch_policy", "invalid", "exactly one of protected_branches and custom_branch_policies must be true", docs)
			return
		}
		e.ProtectedBranches, e.CustomBranchPolicies = p.ProtectedBranches, p.CustomBranchPolicies
	}
	s.mu.Lock()
	out := s.environmentJSON(s.putEnvironment(e))
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// knownUserID reports whether id is the id of a user GET /users/{login} serves: a collaborator's
// or one of Options.Users (every id when Options.Users is unset, as every login exists then).
func (s *Server) knownUserID(id int64) bool {
	if s.opts.Users == nil {
		return true
	}
	for _, l := range s.opts.Users {
		if UserID(l) == id {
			return true
		}
	}
	for l := range s.opts.Collaborators {
		if UserID(l) == id {
			return true
		}
	}
	return false
}

// environmentJSON is GitHub's environment object; s.mu is held.
func (s *Server) environmentJSON(e *Environment) map[string]any {
	api := "https://api.github.com/repos/" + s.opts.Owner + "/" + s.opts.Repo
	rules := []any{}
	if e.WaitTimer > 0 {
		rules = append(rules, map[string]any{"id": e.ID*10 + 1, "type": "wait_timer", "wait_timer": e.WaitTimer})
	}
	if len(e.Reviewers) > 0 {
		rs := []any{}
		for _, id := range e.Reviewers {
			login := s.loginOf(id)
			rs = append(rs, map[string]any{"type": "User", "reviewer": map[string]any{"login": login, "id": id, "type": "User"}})
		}
		rules = append(rules, map[string]any{"id": e.ID*10 + 2, "type": "required_reviewers", "prevent_self_review": e.PreventSelfReview, "reviewers": rs})
	}
	var policy any
	if e.ProtectedBranches || e.CustomBranchPolicies {
		rules = append(rules, map[string]any{"id": e.ID*10 + 3, "type": "branch_policy"})
		policy = map[string]any{"protected_branches": e.ProtectedBranches, "custom_branch_policies": e.CustomBranchPolicies}
	}
	return map[string]any{
		"id": e.ID, "node_id": "EN_kwfake" + strings.ToLower(e.Name), "name": e.Name,
		"url":        api + "/environments/" + url.PathEscape(e.Name),
		"html_url":   "https://github.com/" + s.opts.Owner + "/" + s.opts.Repo + "/deployments/activity_log?environments_filter=" + url.QueryEscape(e.Name),
		"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
		"can_admins_bypass": e.CanAdminsBypass, "protection_rules": rules, "deployment_branch_policy": policy,
	}
}

// loginOf is the login whose UserID is id among the logins the fake knows — Options.Users, the
// collaborators and the users it served (GET /users/{login}) — or "" when none; s.mu is held.
func (s *Server) loginOf(id int64) string {
	cands := slices.Clone(s.opts.Users)
	for l := range s.opts.Collaborators {
		cands = append(cands, l)
	}
	for _, r := range s.requests {
		if l, ok := strings.CutPrefix(r.Path, "/users/"); ok && r.Status == http.StatusOK {
			cands = append(cands, l)
		}
	}
	slices.Sort(cands)
	for _, l := range cands {
		if UserID(l) == id {
			return l
		}
	}
	return ""
}
