package ghfake

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A run's jobs and their logs, as GitHub's workflow-jobs endpoints serve them: GET
// .../actions/runs/{id}/jobs lists them ({"total_count", "jobs"}); GET .../actions/jobs/{id}/logs
// answers 302 with a short-lived Location that serves the job's log as plain text to any client
// (the signed URL needs no token). The fake serves a job's log only once the job has completed,
// and 404 before, as GitHub does for a job whose log is not archived yet.

const (
	docsJobs = "https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run"
	docsLogs = "https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run"
	// blobPrefix is where the fake serves what a signed Location points to.
	blobPrefix = "/_blob/job-logs/"
)

// job is one job of a run.
type job struct {
	id, run            int64
	name               string
	status, conclusion string
	log                string
	started, completed time.Time
}

// SetJob creates or updates the job named name of run: its status (queued, in_progress or
// completed), its conclusion when completed, and its log. It returns the job's id.
func (s *Server) SetJob(run int64, name, status, conclusion, log string) (int64, error) {
	if !slices.Contains([]string{"queued", "in_progress", "completed"}, status) {
		return 0, fmt.Errorf("ghfake: job status %q: queued, in_progress or completed", status)
	}
	if (status == "completed") != (conclusion != "") || conclusion != "" && !slices.Contains(conclusions, conclusion) {
		return 0, fmt.Errorf("ghfake: job conclusion %q: one of %s, with status completed only", conclusion, strings.Join(conclusions, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[run]; !ok {
		return 0, fmt.Errorf("ghfake: no run %d", run)
	}
	i := slices.IndexFunc(s.jobs, func(j *job) bool { return j.run == run && j.name == name })
	if i < 0 {
		s.jobs = append(s.jobs, &job{id: 7_000_000_000 + int64(len(s.jobs))*3, run: run, name: name})
		i = len(s.jobs) - 1
	}
	j, now := s.jobs[i], s.opts.Now()
	if status != "queued" && j.started.IsZero() {
		j.started = now
	}
	if status == "completed" && j.completed.IsZero() {
		j.completed = now
	}
	j.status, j.conclusion, j.log = status, conclusion, log
	return j.id, nil
}

func (j *job) json(base string) map[string]any {
	out := map[string]any{"id": j.id, "run_id": j.run, "name": j.name, "status": j.status, "conclusion": nil,
		"url": base + "actions/jobs/" + strconv.FormatInt(j.id, 10), "started_at": nil, "completed_at": nil}
	if j.conclusion != "" {
		out["conclusion"] = j.conclusion
	}
	if !j.started.IsZero() {
		out["started_at"] = j.started.UTC().Format(time.RFC3339)
	}
	if !j.completed.IsZero() {
		out["completed_at"] = j.completed.UTC().Format(time.RFC3339)
	}
	return out
}

// listJobs serves GET .../actions/runs/{id}/jobs.
func (s *Server) listJobs(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.visibleRun(req.PathValue("id"))
	if r == nil {
		writeError(w, http.StatusNotFound, "Not Found", docsJobs)
		return
	}
	out := []map[string]any{}
	base := s.URL + "repos/" + s.opts.Owner + "/" + s.opts.Repo + "/"
	for _, j := range s.jobs {
		if j.run == r.ID {
			out = append(out, j.json(base))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "jobs": out})
}

// jobLogs serves GET .../actions/jobs/{id}/logs: a redirect to the log of a completed job.
func (s *Server) jobLogs(w http.ResponseWriter, req *http.Request) {
	id, _ := strconv.ParseInt(req.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.jobs, func(j *job) bool { return j.id == id })
	if i < 0 || s.jobs[i].status != "completed" {
		writeError(w, http.StatusNotFound, "Not Found", docsLogs)
		return
	}
	w.Header().Set("Location", strings.TrimSuffix(s.URL, "/")+blobPrefix+strconv.FormatInt(id, 10))
	w.WriteHeader(http.StatusFound)
}

// serveBlob serves a signed Location: the log as plain text, to any client.
func (s *Server) serveBlob(w http.ResponseWriter, req *http.Request) {
	id, _ := strconv.ParseInt(strings.TrimPrefix(req.URL.Path, blobPrefix), 10, 64)
	s.mu.Lock()
	i := slices.IndexFunc(s.jobs, func(j *job) bool { return j.id == id })
	var log string
	if i >= 0 {
		log = s.jobs[i].log
	}
	s.mu.Unlock()
	if i < 0 || req.Method != http.MethodGet {
		http.NotFound(w, req)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, log)
}
