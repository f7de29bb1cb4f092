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

// updateRepo serves PATCH /repos/{owner}/{repo}: the settings the fake keeps.
func (s *Server) updateRepo(w http.ResponseWriter, req *http.Request) {
	var body struct {
		AllowAutoMerge      *bool `json:"allow_auto_merge"`
		DeleteBranchOnMerge *bool `json:"delete_branch_on_merge"`
	}
	if !readBody(w, req, &body, docsUpdateRepo) {
		return
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
}

// putWorkflowPermissions serves PUT .../actions/permissions/workflow.
func (s *Server) putWorkflowPermissions(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var body struct {
		Default *string `json:"default_workflow_permissions"`
		Approve *bool   `json:"can_approve_pull_request_reviews"`
	}
	if !readBody(w, req, &body, docsWorkflowPm) {
		return
	}
	if body.Default != nil {
		if *body.Default != "read" && *body.Default != "write" {
			validation(w, "Repository", "default_workflow_permissions", "invalid", "", docsWorkflowPm)
			return
		}
		s.settings.DefaultWorkflowPermissions = *body.Default
	}
	if body.Approve != nil {
		s.settings.CanApprovePullRequestReviews = *body.Approve
	}
	w.WriteHeader(http.StatusNoContent)
}

// getWorkflowPermissions serves .../actions/permissions/workflow by any method but PUT.
func (s *Server) getWorkflowPermissions(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"default_workflow_permissions": s.settings.DefaultWorkflowPermissions, "can_approve_pull_request_reviews": s.settings.CanApprovePullRequestReviews})
}

// putProtection serves PUT .../branches/{branch}/protection.
func (s *Server) putProtection(w http.ResponseWriter, req *http.Request) {
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
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	branch, _ := url.PathUnescape(req.PathValue("branch"))
	if s.sha(branch) == "" {
		writeError(w, http.StatusNotFound, "Branch not found", docsProtection+"#update-branch-protection")
		return
	}
	if body.EnforceAdmins == nil || body.Restrictions == nil {
		// GitHub requires these four keys, null allowed.
		validation(w, "Protection", "enforce_admins", "missing_field", "", docsProtection+"#update-branch-protection")
		return
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
}

// getProtection serves GET .../branches/{branch}/protection.
func (s *Server) getProtection(w http.ResponseWriter, req *http.Request) {
	branch := req.PathValue("branch")
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.full[branch]
	if p == nil {
		if q := s.protection[branch]; q != nil {
			p = &FullProtection{Contexts: q.Contexts, Strict: q.Strict, RequiredApprovingReviews: -1}
		}
	}
	if p == nil {
		writeError(w, http.StatusNotFound, "Branch not protected", docsProtection+"#get-branch-protection")
		return
	}
	writeJSON(w, http.StatusOK, protectionJSON(p))
}

// getLabel serves GET .../labels/{name}, matching the name case-insensitively.
func (s *Server) getLabel(w http.ResponseWriter, req *http.Request) {
	name, _ := url.PathUnescape(req.PathValue("name"))
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := range s.labels {
		if strings.EqualFold(n, name) {
			writeJSON(w, http.StatusOK, map[string]any{"name": n, "color": s.labels[n]})
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found", docsLabels+"#get-a-label")
}

// createLabel serves POST .../labels.
func (s *Server) createLabel(w http.ResponseWriter, req *http.Request) {
	var body struct{ Name, Color, Description string }
	if !readBody(w, req, &body, docsLabels+"#create-a-label") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if body.Name == "" {
		validation(w, "Label", "name", "missing_field", "", docsLabels+"#create-a-label")
		return
	}
	for n := range s.labels {
		if strings.EqualFold(n, body.Name) {
			validation(w, "Label", "name", "already_exists", "", docsLabels+"#create-a-label")
			return
		}
	}
	if s.labels == nil {
		s.labels = map[string]string{}
	}
	s.labels[body.Name] = body.Color
	writeJSON(w, http.StatusCreated, map[string]any{"name": body.Name, "color": body.Color})
}

// getVariable serves GET .../actions/variables/{name}.
func (s *Server) getVariable(w http.ResponseWriter, req *http.Request) {
	name := strings.ToUpper(req.PathValue("name"))
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.variables[name]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", docsVariables+"#get-a-repository-variable")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "value": v, "created_at": time.Unix(0, 0).UTC()})
}

// createVariable serves POST .../actions/variables.
func (s *Server) createVariable(w http.ResponseWriter, req *http.Request) {
	var body struct{ Name, Value string }
	if !readBody(w, req, &body, docsVariables+"#create-a-repository-variable") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.ToUpper(body.Name)
	switch {
	case name == "" || body.Value == "":
		validation(w, "Variable", "value", "missing_field", "", docsVariables)
		return
	case strings.HasPrefix(name, "GITHUB_"):
		validation(w, "Variable", "name", "invalid", "Variable names must not start with GITHUB_", docsVariables)
		return
	}
	if _, ok := s.variables[name]; ok {
		writeError(w, http.StatusConflict, "Already exists - Variable already exists", docsVariables+"#create-a-repository-variable")
		return
	}
	if s.variables == nil {
		s.variables = map[string]string{}
	}
	s.variables[name] = body.Value
	writeJSON(w, http.StatusCreated, map[string]any{})
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
