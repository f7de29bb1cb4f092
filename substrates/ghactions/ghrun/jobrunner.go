package ghrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// The Runner inside a job. A skill calls `autonomy runner --substrate gh-actions launch|get|
// list|cancel` from its agent job; the job's environment names the repository
// (GITHUB_REPOSITORY), the API (GITHUB_API_URL), the token (GH_TOKEN, or GITHUB_TOKEN) and the
// actor (AUTONOMY_ACTOR, which the compiled job sets). What the actor may do comes from the
// installation in the checkout (the manifest compile wrote, .autonomy/gh-actions/manifest.json),
// never from the environment: an env var names who calls, not what it holds. The caller's
// capabilities bound each verb exactly as on the local substrate (substrates.Caller). The job
// token's permissions, computed from the same capabilities, remain the hard bound.

// maxManifestBytes bounds the manifest a job runner reads (a 10,000-actor fleet's is a few MB).
const maxManifestBytes = 64 << 20

// InstalledActor is an actor as the installed manifest lists it.
type InstalledActor = wire.ManifestActor

// ReadInstalled reads the actors of the gh-actions installation at dir (a checkout).
func ReadInstalled(dir string) ([]InstalledActor, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the installation: %w", err)
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(wire.ManifestPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no gh-actions installation here (run it from the repository's checkout, or pass --dir; compile writes %s)", filepath.Join(dir, filepath.FromSlash(wire.ManifestPath)), wire.ManifestPath)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the installation: %w", err)
	}
	defer f.Close()
	data, err := bounded.Read(f, maxManifestBytes)
	if bounded.IsTooLarge(err) {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a manifest compile wrote", wire.ManifestPath, maxManifestBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", wire.ManifestPath, err)
	}
	var m struct {
		Target string           `json:"target"`
		Actors []InstalledActor `json:"actors"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v: compile the profile again", wire.ManifestPath, err)
	}
	if m.Target != wire.Name || len(m.Actors) == 0 {
		return nil, fmt.Errorf("%s: not a gh-actions manifest with actors (target %q): compile the profile again", wire.ManifestPath, m.Target)
	}
	return m.Actors, nil
}

// JobOptions configure a JobRunner.
type JobOptions struct {
	// Dir is the checkout holding the installation (GITHUB_WORKSPACE, else ".", when empty).
	Dir string
	// Getenv reads the job's environment (os.Getenv when nil).
	Getenv func(string) string
	// HTTPClient, PollInterval and FindTimeout are as in RunnerOptions.
	HTTPClient                *http.Client
	PollInterval, FindTimeout time.Duration
}

// JobRunner is the GitHub runner as a caller in a job uses it: every verb is bounded by the
// caller's installed capabilities (none when the operator calls from outside the fleet).
type JobRunner struct {
	*Runner
	// Caller is the calling actor (nil for the operator).
	Caller *substrates.Caller
	// Actors are the installation's actors, in manifest order.
	Actors []InstalledActor
}

// DeniedError is a verb refused to the calling actor: it lacks the capability.
type DeniedError struct{ Msg string }

func (e *DeniedError) Error() string { return e.Msg }

// NewJobRunner builds the runner of the job whose environment opts reads.
func NewJobRunner(opts JobOptions) (*JobRunner, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.Dir
	if dir == "" {
		dir = getenv("GITHUB_WORKSPACE")
	}
	if dir == "" {
		dir = "."
	}
	actors, err := ReadInstalled(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(actors))
	for i, a := range actors {
		names[i] = a.Name
	}
	repo := getenv("GITHUB_REPOSITORY")
	if repo == "" {
		return nil, errors.New("GITHUB_REPOSITORY is not set: GitHub sets it in every job; outside one, set it to OWNER/NAME")
	}
	token := getenv("GH_TOKEN")
	if token == "" {
		token = getenv("GITHUB_TOKEN")
	}
	caller, err := jobCaller(getenv, repo, actors)
	if err != nil {
		return nil, err
	}
	r, err := NewRunner(RunnerOptions{Repo: repo, Token: token, BaseURL: getenv("GITHUB_API_URL"), Actors: names,
		HTTPClient: opts.HTTPClient, PollInterval: opts.PollInterval, FindTimeout: opts.FindTimeout})
	if err != nil {
		return nil, err
	}
	return &JobRunner{Runner: r, Caller: caller, Actors: actors}, nil
}

// jobCaller identifies the calling actor: AUTONOMY_ACTOR, or else the fleet actor whose workflow
// the job runs (GITHUB_WORKFLOW_REF, which GitHub sets); both must agree when both name one.
// Neither naming an actor is the operator (a workflow of their own, or a shell).
func jobCaller(getenv func(string) string, repo string, actors []InstalledActor) (*substrates.Caller, error) {
	byWorkflow := ""
	if ref := getenv("GITHUB_WORKFLOW_REF"); ref != "" {
		p, _, _ := strings.Cut(strings.TrimPrefix(ref, repo+"/"), "@")
		for _, a := range actors {
			if a.Workflow == p {
				byWorkflow = a.Name
			}
		}
	}
	name := getenv(wire.ActorEnv)
	if name == "" {
		name = byWorkflow
	}
	if name == "" {
		return nil, nil
	}
	if byWorkflow != "" && byWorkflow != name {
		return nil, &DeniedError{Msg: fmt.Sprintf("%s=%s, but this job runs the workflow of actor %q: an actor acts only as itself", wire.ActorEnv, name, byWorkflow)}
	}
	i := slices.IndexFunc(actors, func(a InstalledActor) bool { return a.Name == name })
	if i < 0 {
		return nil, &DeniedError{Msg: fmt.Sprintf("%s=%s names no actor of the installed fleet: an unknown caller is refused", wire.ActorEnv, name)}
	}
	return &substrates.Caller{Who: fmt.Sprintf("actor %q", name), Caps: substrates.ParseCapabilities(actors[i].Capabilities)}, nil
}

// Authorize refuses verb on actor's sessions ("" for any) unless the caller's capabilities
// allow it: a *DeniedError, or nil.
func (j *JobRunner) Authorize(verb, actor string) error { return j.authorize(verb, actor) }

// Lists reports whether the caller may see actor's sessions (agent:list, scoped or not).
func (j *JobRunner) Lists(actor string) bool {
	if j.Caller == nil {
		return true
	}
	if scope := j.Caller.ListScope(); scope != "" {
		return actor == scope
	}
	return j.authorize("list", "") == nil
}

func (j *JobRunner) authorize(verb, actor string) error {
	if j.Caller == nil {
		return nil
	}
	if msg := j.Caller.Authorize(verb, actor); msg != "" {
		return &DeniedError{Msg: msg}
	}
	return nil
}

// Installed is the installed actor named name.
func (j *JobRunner) Installed(name string) (InstalledActor, bool) {
	i := slices.IndexFunc(j.Actors, func(a InstalledActor) bool { return a.Name == name })
	if i < 0 {
		return InstalledActor{}, false
	}
	return j.Actors[i], true
}

// Launch needs agent:launch (scoped: that actor only).
func (j *JobRunner) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	if err := j.authorize("launch", agent); err != nil {
		return ir.Session{}, err
	}
	return j.Runner.Launch(ctx, agent, params)
}

// Get needs agent:list; a scoped one sees its actor's sessions only.
func (j *JobRunner) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	if err := j.authorize("list", ""); err != nil {
		return ir.Session{}, false, err
	}
	s, ok, err := j.Runner.Get(ctx, id)
	if err != nil || !ok {
		return s, ok, err
	}
	if j.Caller != nil {
		if scope := j.Caller.ListScope(); scope != "" && s.Agent != scope {
			return ir.Session{}, false, j.authorize("list", s.Agent)
		}
	}
	return s, true, nil
}

// List needs agent:list; a scoped one lists its actor's sessions only.
func (j *JobRunner) List(ctx context.Context) ([]ir.Session, error) {
	if err := j.authorize("list", ""); err != nil {
		return nil, err
	}
	ss, err := j.Runner.List(ctx)
	if err != nil || j.Caller == nil {
		return ss, err
	}
	if scope := j.Caller.ListScope(); scope != "" {
		ss = slices.DeleteFunc(ss, func(s ir.Session) bool { return s.Agent != scope })
	}
	return ss, nil
}

// Cancel needs agent:cancel for the session's actor. It is false for an unknown session.
func (j *JobRunner) Cancel(ctx context.Context, id string) (bool, error) {
	if j.Caller != nil {
		s, ok, err := j.Runner.Get(ctx, id)
		if err != nil || !ok {
			return false, err
		}
		if err := j.authorize("cancel", s.Agent); err != nil {
			return false, err
		}
	}
	return j.Runner.Cancel(ctx, id)
}

// Update needs agent:update; GitHub then refuses every transition but cancel (Runner.Update).
func (j *JobRunner) Update(ctx context.Context, id string, patch ir.Patch) (bool, error) {
	if patch.Status == ir.Cancelled {
		return j.Cancel(ctx, id)
	}
	if err := j.authorize("update", ""); err != nil {
		return false, err
	}
	return j.Runner.Update(ctx, id, patch)
}

var _ ir.Runner = (*JobRunner)(nil)

// Repo is the repository the runner acts on, OWNER/NAME.
func (r *Runner) Repo() string { return r.opts.Repo }
