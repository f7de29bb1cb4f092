package ghfake

import (
	"fmt"
	"net/http"
)

// dispatched answers an accepted dispatch: 204 No Content, or, when the request asked for
// return_run_details (and Options.DispatchNoContent is off), 200 with the run's id, its API URL
// and its web URL, as GitHub has answered since February 2026. A run GitHub named exists at
// once: Options.Visibility and VisibleAfterLists delay only runs dispatched without details.
func (s *Server) dispatched(w http.ResponseWriter, r *run, details bool) {
	if !details || s.opts.DispatchNoContent {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r.visibleAt, r.visibleList = s.opts.Now(), s.lists
	r.Visible = true
	writeJSON(w, http.StatusOK, struct {
		ID      int64  `json:"workflow_run_id"`
		RunURL  string `json:"run_url"`
		HTMLURL string `json:"html_url"`
	}{r.ID,
		fmt.Sprintf("%srepos/%s/%s/actions/runs/%d", s.URL, s.opts.Owner, s.opts.Repo, r.ID),
		fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d", s.opts.Owner, s.opts.Repo, r.ID)})
}
