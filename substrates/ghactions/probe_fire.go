package ghactions

import (
	"context"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghexpr"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// seenFrom says where the GitHub subject's Seen params come from.
const seenFrom = "the agent job's env, evaluated from the workflow as compiled with the run's actor, event and inputs as GitHub reports them (the job itself runs on GitHub's machines), held"

// sessionNotProbed says why the GitHub subject launches as the operator only, until ProbeApply
// runs the apply jobs of its sessions' runs.
const sessionNotProbed = "on GitHub a session launches through an agent:launch effect that the trusted apply job of its run checks and applies; this probe dispatches as the operator only (autonomy conformance runs the apply job when it has the autonomy binary)"

// withFiring sets the hooks of the param-sources check on s: Fire dispatches as the operator,
// and Seen evaluates the agent job's env of the run's workflow (in out) against what GitHub
// reports of the run, through facts, a runner with nothing in memory.
func withFiring(s *substrates.ProbeSubject, facts *ghrun.Runner, out substrates.Output, dispatcher string) {
	s.Fire = func(ctx context.Context, actor string, f substrates.Firing) (ir.Session, error) {
		if f.Session != "" {
			return ir.Session{}, fmt.Errorf("launching from inside session %s: %s", f.Session, sessionNotProbed)
		}
		params := ir.LaunchParams{}
		for k, v := range f.Params {
			params[k] = v
		}
		for k, v := range map[string]string{"PROBE_REF": f.Ref, "PROBE_TEXT": f.Text, "PROBE_ACTOR": f.From, "PROBE_KIND": f.Kind} {
			if v != "" {
				params[k] = v
			}
		}
		return s.Runner.Launch(ctx, actor, params)
	}
	s.SessionNotProbed, s.Dispatcher, s.SeenFrom = sessionNotProbed, dispatcher, seenFrom
	s.DispatchKind = "workflow_dispatch" // trigger.kind is GitHub's event_name (the standard's table)
	owner, _, _ := strings.Cut(facts.Repo(), "/")
	s.Schedule = func(_ context.Context, actor string) ([]string, map[string]string, error) {
		return scheduled(out, owner, actor)
	}
	s.ScheduleKind = "schedule"
	s.Seen = func(ctx context.Context, id string) (map[string]string, error) {
		run, ok, err := facts.Facts(ctx, id)
		if err != nil || !ok {
			return nil, err
		}
		owner, _, _ := strings.Cut(facts.Repo(), "/")
		values := map[string]any{"github.actor": run.Actor, "github.event_name": run.Event, "github.repository_owner": owner, "github.run_id": id}
		if run.Event == "workflow_dispatch" {
			// GitHub's docs: a run's first attempt was initiated by its actor, and a
			// workflow_dispatch payload's sender is who dispatched it.
			values["github.triggering_actor"], values["github.event.sender.login"] = run.Actor, run.Actor
		}
		for k, v := range run.Inputs {
			values["inputs."+k] = v
		}
		return jobEnv(out, run.Agent, "agent", values)
	}
}

// scheduled reads actor's workflow in out as GitHub's scheduler does: the crons of its
// on.schedule, and the env of its agent job on a schedule event (nil when the job's if: skips
// it). The owner stands for the actor of a scheduled run.
func scheduled(out substrates.Output, owner, actor string) ([]string, map[string]string, error) {
	wf, path, err := readWorkflow(out, actor)
	if err != nil {
		return nil, nil, err
	}
	var crons []string
	for _, c := range wf.On.Schedule {
		crons = append(crons, c.Cron)
	}
	values := map[string]any{"github.event_name": "schedule", "github.actor": owner, "github.repository_owner": owner}
	job, ok := wf.Jobs["agent"]
	if !ok {
		return crons, nil, fmt.Errorf("%s has no job agent", path)
	}
	if job.If != "" {
		run, err := ghexpr.Eval(job.If, values)
		if err != nil {
			return crons, nil, fmt.Errorf("%s: jobs.agent.if: %v", path, err)
		}
		if run != "true" {
			return crons, nil, nil
		}
	}
	env, err := jobEnv(out, actor, "agent", values)
	return crons, env, err
}

// probeRun is the part of a workflow the GitHub subject's hooks read.
type probeRun struct {
	On struct {
		Schedule []struct{ Cron string } `yaml:"schedule"`
	} `yaml:"on"`
	Jobs map[string]struct {
		If    string            `yaml:"if"`
		Env   map[string]string `yaml:"env"`
		Steps []struct {
			Name string `yaml:"name"`
			Run  string `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// readWorkflow parses actor's workflow in out.
func readWorkflow(out substrates.Output, actor string) (*probeRun, string, error) {
	path := ".github/workflows/" + actor + ".yml"
	data, err := out.File(path)
	if err != nil {
		return nil, path, err
	}
	var wf probeRun
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, path, fmt.Errorf("%s: %v", path, err)
	}
	return &wf, path, nil
}

// jobEnv evaluates the env of job id of actor's workflow in out against values.
func jobEnv(out substrates.Output, actor, id string, values map[string]any) (map[string]string, error) {
	wf, path, err := readWorkflow(out, actor)
	if err != nil {
		return nil, err
	}
	job, ok := wf.Jobs[id]
	if !ok {
		return nil, fmt.Errorf("%s has no job %s", path, id)
	}
	env := make(map[string]string, len(job.Env))
	for k, v := range job.Env {
		if env[k], err = ghexpr.Eval(v, values); err != nil {
			return nil, fmt.Errorf("%s: jobs.%s.env.%s: %v", path, id, k, err)
		}
	}
	return env, nil
}
