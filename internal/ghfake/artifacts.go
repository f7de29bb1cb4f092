package ghfake

import (
	"net/http"
	"strconv"
	"time"
)

// Workflow run artifacts (https://docs.github.com/rest/actions/artifacts): a run's artifacts are
// listed by name, and deleted one by one. Tests play the upload and download actions: AddArtifact
// records what a run uploaded, HasArtifact whether a download would find it.

const docsArtifacts = "https://docs.github.com/rest/actions/artifacts"

type artifact struct {
	id   int64
	run  int64
	name string
	at   time.Time
}

// AddArtifact records that run uploaded an artifact named name and returns its id. GitHub refuses
// a second artifact of the same name in a run (upload-artifact v4): so does the fake.
func (s *Server) AddArtifact(run int64, name string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.artifacts {
		if a.run == run && a.name == name {
			return 0, false
		}
	}
	s.artifactSeq++
	a := &artifact{id: 9_000_000 + s.artifactSeq, run: run, name: name, at: s.opts.Now()}
	s.artifacts = append(s.artifacts, a)
	return a.id, true
}

// HasArtifact reports whether run has an artifact named name (not deleted).
func (s *Server) HasArtifact(run int64, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.artifacts {
		if a.run == run && a.name == name {
			return true
		}
	}
	return false
}

// listArtifacts serves GET .../actions/runs/{id}/artifacts[?name=].
func (s *Server) listArtifacts(w http.ResponseWriter, req *http.Request) {
	run, err := strconv.ParseInt(req.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[run]; err != nil || !ok {
		writeError(w, http.StatusNotFound, "Not Found", docsArtifacts)
		return
	}
	name := req.URL.Query().Get("name")
	out := []map[string]any{}
	for _, a := range s.artifacts {
		if a.run != run || name != "" && a.name != name {
			continue
		}
		out = append(out, map[string]any{"id": a.id, "node_id": "MDg6QXJ0aWZhY3Q" + strconv.FormatInt(a.id, 10), "name": a.name,
			"size_in_bytes": 1024, "expired": false, "created_at": a.at.Format(time.RFC3339),
			"workflow_run": map[string]any{"id": a.run}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "artifacts": out})
}

// deleteArtifact serves DELETE .../actions/artifacts/{id}.
func (s *Server) deleteArtifact(w http.ResponseWriter, req *http.Request) {
	if s.readOnly(req) {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration", docsArtifacts)
		return
	}
	id, _ := strconv.ParseInt(req.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range s.artifacts {
		if a.id == id {
			s.artifacts = append(s.artifacts[:i], s.artifacts[i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found", docsArtifacts)
}
