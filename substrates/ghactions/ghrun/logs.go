package ghrun

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/google/go-github/v62/github"
)

// MaxJobLogBytes bounds what Logs copies of one job's log.
const MaxJobLogBytes = 64 << 20

// Logs writes the logs of a session (a run of the fleet's workflows) to w: each job's, under a
// "== JOB (CONCLUSION) ==" line, in the order GitHub lists the jobs. GitHub serves a job's log
// once the job has completed, so a job still running is named with its status and no log.
// Follow watches the run instead, PollInterval apart, printing each job's log as it completes,
// until the run has ended and every job's log is printed (or ctx ends). A run that is not a
// session of this fleet is an error.
func (r *Runner) Logs(ctx context.Context, id string, follow bool, w io.Writer) error {
	n, ok := parseRunID(id)
	if !ok {
		return fmt.Errorf("session %q is not a run id of %s", id, r.opts.Repo)
	}
	printed := map[int64]bool{}
	for {
		run, err := r.getRun(ctx, n)
		if err != nil {
			return err
		}
		if run == nil {
			return fmt.Errorf("no session %s (a run of the fleet's workflows in %s)", id, r.opts.Repo)
		}
		if _, ok := r.agentOf(run); !ok {
			return fmt.Errorf("run %d is not a session of this fleet: its workflow is %s", n, run.Path)
		}
		ended := run.GetStatus() == "completed" // read before the jobs: none completes unseen
		jobs, err := r.jobs(ctx, n)
		if err != nil {
			return err
		}
		pending := false
		for _, j := range jobs {
			if printed[j.GetID()] {
				continue
			}
			if j.GetStatus() != "completed" {
				pending = true
				if !follow {
					fmt.Fprintf(w, "== %s (%s): GitHub serves its log once it completes ==\n", j.GetName(), j.GetStatus())
				}
				continue
			}
			if err := r.jobLog(ctx, j, w); err != nil {
				return err
			}
			printed[j.GetID()] = true
		}
		if !follow || ended && !pending {
			return nil
		}
		if err := sleep(ctx, r.opts.PollInterval); err != nil {
			return err
		}
	}
}

// jobs lists every job of run n (every page).
func (r *Runner) jobs(ctx context.Context, n int64) ([]*github.WorkflowJob, error) {
	var out []*github.WorkflowJob
	opts := &github.ListWorkflowJobsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		var page *github.Jobs
		resp, err := r.do(ctx, func(ctx context.Context) (resp *github.Response, err error) {
			page, resp, err = r.gh.Actions.ListWorkflowJobs(ctx, r.owner, r.repo, n, opts)
			return resp, err
		})
		if err != nil {
			return nil, r.fail(fmt.Sprintf("listing the jobs of run %d in %s", n, r.opts.Repo), "actions: read", err)
		}
		out = append(out, page.Jobs...)
		if resp == nil || resp.NextPage == 0 {
			return slices.Clip(out), nil
		}
		opts.Page = resp.NextPage
	}
}

// jobLog writes one completed job's log: GitHub answers with a short-lived signed URL, fetched
// without the token.
func (r *Runner) jobLog(ctx context.Context, j *github.WorkflowJob, w io.Writer) error {
	var u string
	_, err := r.do(ctx, func(ctx context.Context) (*github.Response, error) {
		loc, resp, err := r.gh.Actions.GetWorkflowJobLogs(ctx, r.owner, r.repo, j.GetID(), 0)
		if loc != nil {
			u = loc.String()
		}
		return resp, err
	})
	if err != nil {
		return r.fail(fmt.Sprintf("getting the log of job %q (%d) in %s", j.GetName(), j.GetID(), r.opts.Repo), "actions: read", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := r.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("downloading the log of job %q: %w", j.GetName(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading the log of job %q: %s (the signed URL lasts a minute: try again)", j.GetName(), resp.Status)
	}
	fmt.Fprintf(w, "== %s (%s) ==\n", j.GetName(), j.GetConclusion())
	if _, err := io.Copy(w, io.LimitReader(resp.Body, MaxJobLogBytes)); err != nil {
		return fmt.Errorf("downloading the log of job %q: %w", j.GetName(), err)
	}
	return nil
}

// Logs needs agent:list for the session's actor, as get does.
func (j *JobRunner) Logs(ctx context.Context, id string, follow bool, w io.Writer) error {
	if _, ok, err := j.Get(ctx, id); err != nil || !ok {
		if err != nil {
			return err
		}
		return fmt.Errorf("no session %s (a run of the fleet's workflows in %s)", id, j.opts.Repo)
	}
	return j.Runner.Logs(ctx, id, follow, w)
}
