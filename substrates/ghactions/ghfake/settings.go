package ghfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Repository settings, labels, Actions variables, the workflow token's default permissions and
// full branch protection: what autonomy provision reads and writes (docs.github.com/rest:
// repos#update-a-repository, issues/labels, actions/variables, actions/permissions,
// branches/branch-protection#update-branch-protection).

const (
	docsUpdateRepo = "https://docs.github.com/rest/repos/repos#update-a-repository"
	docsVariables  = "https://docs.github.com/rest/actions/variables"
	docsWorkflowPm = "https://docs.github.com/rest/actions/permissions#set-default-workflow-permissions-for-a-repository"
)

// Settings are the repository settings the fake keeps.
type Settings struct {
	AllowAutoMerge, DeleteBranchOnMerge bool
	// DefaultWorkflowPermissions is "read" or "write"; CanApprovePullRequestReviews is the
	// "Allow GitHub Actions to create and approve pull requests" setting.
	DefaultWorkflowPermissions   string
	CanApprovePullRequestReviews bool
}

// FullProtection is a branch's protection as the REST API reports and replaces it.
type FullProtection struct {
	Contexts                 []string
	Strict                   bool
	EnforceAdmins            bool
	AllowForcePushes         bool
	RequiredApprovingReviews int // -1: no required reviews
	LinearHistory            bool
}

// SetSettings replaces the repository settings.
func (s *Server) SetSettings(st Settings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings = st
}

// CurrentSettings returns the repository settings.
func (s *Server) CurrentSettings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// Labels returns the repository's label names, sorted.
func (s *Server) Labels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.labels {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Variables returns the repository's Actions variables.
func (s *Server) Variables() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.variables {
		out[k] = v
	}
	return out
}

// ProtectionOf returns branch's full protection (false when unprotected).
func (s *Server) ProtectionOf(branch string) (FullProtection, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.full[branch]
	if !ok {
		return FullProtection{}, false
	}
	c := *p
	c.Contexts = slices.Clone(p.Contexts)
	return c, true
}

// SetProtection replaces branch's full protection (and what Mergeable enforces).
func (s *Server) SetProtection(branch string, p FullProtection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setProtection(branch, p)
}

func (s *Server) setProtection(branch string, p FullProtection) {
	if s.full == nil {
		s.full = map[string]*FullProtection{}
	}
	if s.protection == nil {
		s.protection = map[string]*Protection{}
	}
	s.full[branch] = &p
	s.protection[branch] = &Protection{Contexts: slices.Clone(p.Contexts), Strict: p.Strict}
}

func protectionJSON(p *FullProtection) map[string]any {
	out := map[string]any{
		"required_status_checks":  map[string]any{"strict": p.Strict, "contexts": p.Contexts},
		"enforce_admins":          map[string]any{"enabled": p.EnforceAdmins},
		"allow_force_pushes":      map[string]any{"enabled": p.AllowForcePushes},
		"required_linear_history": map[string]any{"enabled": p.LinearHistory},
	}
	if p.RequiredApprovingReviews >= 0 {
		out["required_pull_request_reviews"] = map[string]any{"required_approving_review_count": p.RequiredApprovingReviews}
	}
	return out
}

// routeSettings serves the settings endpoints; it reports false for a path it does not know.
// The caller has refused writes by a read-only token.
func (s *Server) routeSettings(w http.ResponseWriter, req *http.Request, rest []string) bool {
	m := req.Method
	switch {
	case len(rest) == 0 && m == http.MethodPatch:
		var body struct {
			AllowAutoMerge      *bool `json:"allow_auto_merge"`
			DeleteBranchOnMerge *bool `json:"delete_branch_on_merge"`
		}
		if !readBody(w, req, &body, docsUpdateRepo) {
			return true
		}
		s.mu.Lock()
		if body.AllowAutoMerge != nil {
			s.settings.AllowAutoMerge = *body.AllowAutoMerge
		}
		if body.DeleteBranchOnMerge != nil {
			s.settings.DeleteBranchOnMerge = *body.DeleteBranchOnMerge
		}
		out := s.repoJSON()
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, out)
	case len(rest) == 3 && rest[0] == "actions" && rest[1] == "permissions" && rest[2] == "workflow":
		s.mu.Lock()
		defer s.mu.Unlock()
		if m == http.MethodPut {
			var body struct {
				Default *string `json:"default_workflow_permissions"`
				Approve *bool   `json:"can_approve_pull_request_reviews"`
			}
			if !readBody(w, req, &body, docsWorkflowPm) {
				return true
			}
			if body.Default != nil {
				if *body.Default != "read" && *body.Default != "write" {
					validation(w, "Repository", "default_workflow_permissions", "invalid", "", docsWorkflowPm)
					return true
				}
				s.settings.DefaultWorkflowPermissions = *body.Default
			}
			if body.Approve != nil {
				s.settings.CanApprovePullRequestReviews = *body.Approve
			}
			w.WriteHeader(http.StatusNoContent)
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"default_workflow_permissions": s.settings.DefaultWorkflowPermissions, "can_approve_pull_request_reviews": s.settings.CanApprovePullRequestReviews})
	case len(rest) == 3 && rest[0] == "branches" && rest[2] == "protection" && m == http.MethodPut:
		var body struct {
			Checks *struct {
				Strict   bool     `json:"strict"`
				Contexts []string `json:"contexts"`
			} `json:"required_status_checks"`
			EnforceAdmins *bool `json:"enforce_admins"`
			Reviews       *struct {
				Count int `json:"required_approving_review_count"`
			} `json:"required_pull_request_reviews"`
			Restrictions     json.RawMessage `json:"restrictions"`
			AllowForcePushes *bool           `json:"allow_force_pushes"`
			Linear           *bool           `json:"required_linear_history"`
		}
		if !readBody(w, req, &body, docsProtection+"#update-branch-protection") {
			return true
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		branch, _ := url.PathUnescape(rest[1])
		if s.sha(branch) == "" {
			writeError(w, http.StatusNotFound, "Branch not found", docsProtection+"#update-branch-protection")
			return true
		}
		if body.EnforceAdmins == nil || body.Restrictions == nil {
			// GitHub requires these four keys, null allowed.
			validation(w, "Protection", "enforce_admins", "missing_field", "", docsProtection+"#update-branch-protection")
			return true
		}
		p := FullProtection{EnforceAdmins: *body.EnforceAdmins, RequiredApprovingReviews: -1}
		if body.Checks != nil {
			p.Strict, p.Contexts = body.Checks.Strict, body.Checks.Contexts
		}
		if body.Reviews != nil {
			p.RequiredApprovingReviews = body.Reviews.Count
		}
		if body.AllowForcePushes != nil {
			p.AllowForcePushes = *body.AllowForcePushes
		}
		if body.Linear != nil {
			p.LinearHistory = *body.Linear
		}
		s.setProtection(branch, p)
		writeJSON(w, http.StatusOK, protectionJSON(&p))
	case len(rest) == 3 && rest[0] == "branches" && rest[2] == "protection" && m == http.MethodGet:
		s.mu.Lock()
		defer s.mu.Unlock()
		p := s.full[rest[1]]
		if p == nil {
			if q := s.protection[rest[1]]; q != nil {
				p = &FullProtection{Contexts: q.Contexts, Strict: q.Strict, RequiredApprovingReviews: -1}
			}
		}
		if p == nil {
			writeError(w, http.StatusNotFound, "Branch not protected", docsProtection+"#get-branch-protection")
			return true
		}
		writeJSON(w, http.StatusOK, protectionJSON(p))
	case len(rest) == 2 && rest[0] == "labels" && m == http.MethodGet:
		name, _ := url.PathUnescape(rest[1])
		s.mu.Lock()
		defer s.mu.Unlock()
		for n := range s.labels {
			if strings.EqualFold(n, name) {
				writeJSON(w, http.StatusOK, map[string]any{"name": n, "color": s.labels[n]})
				return true
			}
		}
		writeError(w, http.StatusNotFound, "Not Found", docsLabels+"#get-a-label")
	case len(rest) == 1 && rest[0] == "labels" && m == http.MethodPost:
		var body struct{ Name, Color, Description string }
		if !readBody(w, req, &body, docsLabels+"#create-a-label") {
			return true
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if body.Name == "" {
			validation(w, "Label", "name", "missing_field", "", docsLabels+"#create-a-label")
			return true
		}
		for n := range s.labels {
			if strings.EqualFold(n, body.Name) {
				validation(w, "Label", "name", "already_exists", "", docsLabels+"#create-a-label")
				return true
			}
		}
		if s.labels == nil {
			s.labels = map[string]string{}
		}
		s.labels[body.Name] = body.Color
		writeJSON(w, http.StatusCreated, map[string]any{"name": body.Name, "color": body.Color})
	case len(rest) == 3 && rest[0] == "actions" && rest[1] == "variables" && m == http.MethodGet:
		s.mu.Lock()
		defer s.mu.Unlock()
		v, ok := s.variables[strings.ToUpper(rest[2])]
		if !ok {
			writeError(w, http.StatusNotFound, "Not Found", docsVariables+"#get-a-repository-variable")
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"name": strings.ToUpper(rest[2]), "value": v, "created_at": time.Unix(0, 0).UTC()})
	case len(rest) == 2 && rest[0] == "actions" && rest[1] == "variables" && m == http.MethodPost:
		var body struct{ Name, Value string }
		if !readBody(w, req, &body, docsVariables+"#create-a-repository-variable") {
			return true
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		name := strings.ToUpper(body.Name)
		switch {
		case name == "" || body.Value == "":
			validation(w, "Variable", "value", "missing_field", "", docsVariables)
			return true
		case strings.HasPrefix(name, "GITHUB_"):
			validation(w, "Variable", "name", "invalid", "Variable names must not start with GITHUB_", docsVariables)
			return true
		}
		if _, ok := s.variables[name]; ok {
			writeError(w, http.StatusConflict, "Already exists - Variable already exists", docsVariables+"#create-a-repository-variable")
			return true
		}
		if s.variables == nil {
			s.variables = map[string]string{}
		}
		s.variables[name] = body.Value
		writeJSON(w, http.StatusCreated, map[string]any{})
	default:
		return false
	}
	return true
}

// SetVariable sets an Actions variable, as the owner would in the settings.
func (s *Server) SetVariable(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.variables == nil {
		s.variables = map[string]string{}
	}
	s.variables[name] = value
}
