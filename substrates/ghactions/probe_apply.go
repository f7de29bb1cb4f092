package ghactions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// scopeLauncher is the probe fleet's skill holding agent:launch@probe: on GitHub a session's
// launch lands only through its run's apply job, which a skill run has (conformance/probe).
const scopeLauncher = "delegator"

// applyStep is the name of the apply job's step that runs autonomy gh apply.
const applyStep = "autonomy gh apply"

// JobTokenEnv names where `autonomy conformance --repo` takes the token its apply job dispatches
// with: a workflow job's GITHUB_TOKEN (actions: write), which GitHub records as
// github-actions[bot], as it does the real apply job's dispatch.
const JobTokenEnv = "AUTONOMY_PROBE_JOB_TOKEN"

// noJobToken says why session-sources is not probed when the apply job has no job token.
const noJobToken = "a session's launch is dispatched by its run's apply job with the job's GITHUB_TOKEN, which GitHub records as github-actions[bot], and the launched workflow reads who fired it from that; the probe's apply job holds only the operator's token, whose dispatch GitHub records as the operator: set " + JobTokenEnv + " to a workflow job's GITHUB_TOKEN (actions: write) to observe it"

// ProbeApply makes s launch from inside a session as GitHub does: a launch a session of s asks for
// is a launch effect in its run's safe-output file, which the run's trusted apply job checks
// against the installed manifest and applies with its own token. Fire with a Session writes that
// file and runs the apply job's `autonomy gh apply` step (its command and env read from the
// session's workflow in out, the installation committed to a scratch git repository as the job's
// checkout) with exe as the job's autonomy and jobToken as its github.token; a refused launch is
// an error naming the reason. The session checks then launch from sessions of the probe fleet's
// skill launcher. Without a jobToken the apply job dispatches with the operator's token, which
// GitHub records as the operator, not as github-actions[bot]: what reaches a launched process is
// then not GitHub's, and session-sources stays not probed.
func ProbeApply(s *substrates.ProbeSubject, opts ghrun.RunnerOptions, out substrates.Output, exe, jobToken string) error {
	facts, err := ghrun.NewRunner(opts)
	if err != nil {
		return err
	}
	fire := s.Fire
	if fire == nil {
		return errors.New("the subject cannot dispatch")
	}
	a := &applier{opts: opts, out: out, exe: exe, facts: facts, token: cmp.Or(jobToken, opts.Token)}
	s.Fire = func(ctx context.Context, actor string, f substrates.Firing) (ir.Session, error) {
		if f.Session == "" {
			return fire(ctx, actor, f)
		}
		return a.launch(ctx, actor, f)
	}
	s.ScopeLauncher = scopeLauncher
	s.SessionNotProbed = ""
	if jobToken == "" {
		s.SessionNotProbed = noJobToken
	}
	return nil
}

// applier runs the apply job of a session's run on a launch effect.
type applier struct {
	opts  ghrun.RunnerOptions
	out   substrates.Output
	exe   string
	facts *ghrun.Runner
	// token is the apply job's github.token.
	token string
}

// launch asks, as session f.Session, to launch actor, runs that run's apply job, and returns the
// session the apply job launched.
func (a *applier) launch(ctx context.Context, actor string, f substrates.Firing) (ir.Session, error) {
	sess, refused, err := a.try(ctx, actor, f)
	if err != nil {
		return ir.Session{}, fmt.Errorf("%w: %v", substrates.ErrNotTried, err)
	}
	if refused != "" {
		return ir.Session{}, errors.New(refused)
	}
	return sess, nil
}

// try runs the apply job on f.Session's launch of actor: the session it launched, or why the
// apply job refused it, or an error when the job could not run or launched nothing.
func (a *applier) try(ctx context.Context, actor string, f substrates.Firing) (ir.Session, string, error) {
	run, err := a.runOf(ctx, f.Session)
	if err != nil {
		return ir.Session{}, "", err
	}
	dir, err := os.MkdirTemp("", "autonomy-apply-")
	if err != nil {
		return ir.Session{}, "", err
	}
	defer os.RemoveAll(dir)
	sha, err := a.checkout(ctx, filepath.Join(dir, "repo"))
	if err != nil {
		return ir.Session{}, "", err
	}
	outputs := filepath.Join(dir, "temp", "autonomy-outputs")
	if err := launchOutputs(outputs, run.Agent, actor, f); err != nil {
		return ir.Session{}, "", err
	}
	before, err := a.facts.List(ctx)
	if err != nil {
		return ir.Session{}, "", err
	}
	log, err := a.runApply(ctx, run, f.Session, sha, dir)
	if err != nil {
		return ir.Session{}, "", err
	}
	if _, why, refused := strings.Cut(log, "**refused**: "); refused {
		why, _, _ = strings.Cut(why, "\n")
		return ir.Session{}, fmt.Sprintf("the apply job of %s's run %s refused the launch of %s: %s", run.Agent, f.Session, actor, strings.TrimSuffix(strings.TrimSpace(why), " |")), nil
	}
	sess, err := a.launched(ctx, before, actor, log)
	return sess, "", err
}

// runOf is what GitHub reports of run id: its actor's workflow, and its inputs, event and actor
// where its title carries them (every launch's does; a run started otherwise: a dispatch).
func (a *applier) runOf(ctx context.Context, id string) (ghrun.RunFacts, error) {
	if run, ok, err := a.facts.Facts(ctx, id); err != nil || ok {
		return run, err
	}
	sess, ok, err := a.facts.Get(ctx, id)
	if err != nil {
		return ghrun.RunFacts{}, err
	}
	if !ok {
		return ghrun.RunFacts{}, fmt.Errorf("session %s is no run of the fleet", id)
	}
	return ghrun.RunFacts{Agent: sess.Agent, Event: "workflow_dispatch", Inputs: sess.Params}, nil
}

// launched finds the session of actor the apply job started: in flight now, not before. It looks
// as the runner looks for a run it dispatched (RunnerOptions.PollInterval, FindTimeout), since a
// dispatched run shows only after a while.
func (a *applier) launched(ctx context.Context, before []ir.Session, actor, log string) (ir.Session, error) {
	s, err := newSession(ctx, a.facts, a.opts, before, actor)
	if err != nil {
		return ir.Session{}, fmt.Errorf("the apply job refused nothing, but %v:\n%s", err, log)
	}
	return s, nil
}

func containsSession(ss []ir.Session, id string) bool {
	for _, s := range ss {
		if s.ID == id {
			return true
		}
	}
	return false
}

// launchAsked is a launch as a session's model may write it in its safe outputs: the launch
// tool's input, and who fired it, its text and its kind, which the tool does not take (a model
// with a shell can write any line), so the apply job must refuse them.
type launchAsked struct {
	tools.LaunchInput
	From string `json:"from,omitempty"`
	Text string `json:"text,omitempty"`
	Kind string `json:"kind,omitempty"`
}

// launchOutputs writes the safe-output file of session f.Session of caller asking to launch
// actor, and its result (done), as its agent job exports them.
func launchOutputs(dir, caller, actor string, f substrates.Firing) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	in, err := json.Marshal(launchAsked{LaunchInput: tools.LaunchInput{Actor: actor, Subject: f.Ref, Params: f.Params}, From: f.From, Text: f.Text, Kind: f.Kind})
	if err != nil {
		return err
	}
	o, err := tools.CreateOutputs(filepath.Join(dir, "outputs.jsonl"))
	if err != nil {
		return err
	}
	err = o.Append(tools.Effect{Tool: tools.Launch, Actor: caller, Session: f.Session, Input: in})
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	result := `{"status":"done","summary":"Asked to launch ` + actor + `.","done":["asked to launch"]}`
	return os.WriteFile(filepath.Join(dir, "result.json"), []byte(result), 0o644)
}

// checkout writes the installation of out into dir and commits it, as the repository's default
// branch the apply job reads the manifest and policy from; it returns the commit.
func (a *applier) checkout(ctx context.Context, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := a.out
	if _, err := substrates.Write(dir, &out, substrates.WriteOptions{}); err != nil {
		return "", err
	}
	var sha string
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=autonomy-probe", "-c", "user.email=probe@localhost", "commit", "-q", "--no-verify", "-m", "install"}, {"rev-parse", "HEAD"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, got)
		}
		sha = strings.TrimSpace(string(got))
	}
	return sha, nil
}

// runApply runs the apply job's autonomy gh apply step of run's workflow, with the job's env
// evaluated for the run, and returns what it printed.
func (a *applier) runApply(ctx context.Context, run ghrun.RunFacts, id, sha, dir string) (string, error) {
	wf, path, err := readWorkflow(a.out, run.Agent)
	if err != nil {
		return "", err
	}
	step := ""
	for _, s := range wf.Jobs["apply"].Steps {
		if s.Name == applyStep {
			step = s.Run
		}
	}
	if step == "" {
		return "", fmt.Errorf("%s has no apply job running %s: a launch its sessions ask for can never land", path, applyStep)
	}
	owner, _, _ := strings.Cut(a.opts.Repo, "/")
	values := map[string]any{"github.token": a.token, "github.actor": run.Actor, "github.event_name": run.Event, "github.repository_owner": owner, "github.run_id": id}
	for k, v := range run.Inputs {
		values["inputs."+k] = v
	}
	env, err := jobEnv(a.out, run.Agent, "apply", values)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", step)
	cmd.Dir = filepath.Join(dir, "repo")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GITHUB_REPOSITORY=" + a.opts.Repo, "GITHUB_SHA=" + sha,
		"GITHUB_RUN_ID=" + id, "GITHUB_WORKSPACE=" + cmd.Dir, "RUNNER_TEMP=" + filepath.Join(dir, "temp"), "AUTONOMY_BIN=" + a.exe}
	if a.opts.BaseURL != "" {
		cmd.Env = append(cmd.Env, "GITHUB_API_URL="+a.opts.BaseURL)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	got, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return "", fmt.Errorf("%s: jobs.apply %s: %v:\n%s", path, applyStep, err, got)
	}
	return string(got), nil
}
