package ghactions

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
)

// A workflow playbook (seed 003) that is an actor's behavior compiles into the actor's workflow
// itself, with no model: each step is a workflow step running `autonomy playbook step`, which
// execs the step's argv (split here, carried as JSON in the step's env, never read by a shell).
// The steps up to the first approval form the job "steps"; each approval step opens a job
// "approval-N" gated by the GitHub environment EnvironmentName(actor, step), whose required
// reviewers approve or reject it, and which needs the job before it: a rejection fails the gate
// and nothing after it runs. The steps' data passes from job to job as the job output "data"
// (gzipped JSON in base64, capped), read by the next job through env.
//
// The gate fails closed: GitHub creates a job's missing environment unprotected, so an approval
// job first runs `autonomy gh gate`, which refuses unless the environment has required reviewers
// and this run's review history holds an approval of it. Reading both takes actions: read, which
// the approval jobs alone are granted on top of the actor's permissions.

// Env names a compiled playbook step reads.
const (
	playbookStepEnv = "AUTONOMY_PLAYBOOK_STEP"
	playbookDataEnv = "AUTONOMY_PLAYBOOK_DATA"
)

// playbookStepScript is the one script of every playbook step: it names only variables.
const playbookStepScript = `"$AUTONOMY_BIN" playbook step --data "$RUNNER_TEMP/autonomy-playbook.json" --workspace "$GITHUB_WORKSPACE"` + "\n"

// gateEnv names the environment `autonomy gh gate` checks; gateScript is the gate step's script.
const (
	gateEnv    = "AUTONOMY_ENVIRONMENT"
	gateScript = `"$AUTONOMY_BIN" gh gate` + "\n"
)

// gateStepName names the step proving an approval job's approval.
const gateStepName = "Check the approval"

// gatePermissions are what an approval job adds to the actor's: reading its environment and its
// run's review history (GitHub's "Actions" read permission covers both).
var gatePermissions = Permissions{"actions": Read}

// EnvironmentName is the GitHub environment gating the approval step of an actor's workflow
// playbook: autonomy-ACTOR-STEP, lowercased, every character other than a letter, digit, '-' or
// '_' replaced by '-'.
func EnvironmentName(actor, step string) string {
	s := strings.ToLower("autonomy-" + actor + "-" + step)
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}

// workflowPlaybook returns the actor's behavior as a resolved workflow playbook, or nil when it
// is none. Its problems, and what GitHub Actions cannot run, are errors of the compile.
func (c *compiler) workflowPlaybook(a *ir.Actor) *resolved.WorkflowPlaybook {
	b := c.r.Behavior(a)
	if b.Kind != resolved.Workflow {
		return nil
	}
	c.errors = append(c.errors, b.Diagnostics...)
	w := b.Workflow
	if w == nil {
		return nil
	}
	bad := func(pos ir.Pos, hint, format string, args ...any) {
		c.errors = append(c.errors, ir.Diagnostic{File: w.File, Pos: pos, Severity: ir.Error, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	ok := true
	for _, cp := range a.Capabilities {
		if cp.Name == "code:propose" || cp.Name == "code:review" {
			c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: cp.Raw.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q: %s needs an agent's output, and its behavior %s is a workflow playbook run without a model on gh-actions", a.Name.Value, cp.Name, a.BehaviorFile),
				Hint:    "give this capability to an agent actor with a skill, or drop it"})
			ok = false
		}
	}
	for _, s := range w.Steps {
		id, ns := s.Spec.ID, s.Spec.Namespace
		switch ns {
		case "cli", "http":
		default:
			bad(s.CommandPos, "use a cli or http step (run the tool as a command), or run this actor on a target that supports "+ns,
				"step %q: %s steps cannot run on gh-actions (only cli and http steps compile into a workflow)", id, ns)
			ok = false
			continue
		}
		if s.WordsError != "" {
			bad(s.CommandPos, "quote the command's words", "step %q: %s", id, s.WordsError)
			ok = false
		}
		for _, name := range s.Spec.Secrets {
			if strings.HasPrefix(strings.ToUpper(name), "GITHUB_") {
				bad(s.Pos, "rename the secret: GitHub refuses secret names starting with GITHUB_",
					"step %q: secret handle $secrets.%s cannot be a GitHub secret", id, name)
				ok = false
			}
		}
	}
	if !ok {
		return nil
	}
	return w
}

// playbookJob is one job of a compiled workflow playbook.
type playbookJob struct {
	id    string
	gate  *resolved.WorkflowStep // the approval step opening the job, if any
	steps []*resolved.WorkflowStep
}

// playbookJobs splits the steps at each approval.
func playbookJobs(w *resolved.WorkflowPlaybook) []playbookJob {
	var jobs []playbookJob
	n := 0
	for _, s := range w.Steps {
		switch {
		case s.Spec.Approval:
			n++
			jobs = append(jobs, playbookJob{id: fmt.Sprintf("approval-%d", n), gate: s})
		case len(jobs) == 0:
			jobs = append(jobs, playbookJob{id: "steps"})
		}
		jobs[len(jobs)-1].steps = append(jobs[len(jobs)-1].steps, s)
	}
	return jobs
}

// playbookWorkflow builds the workflow of an actor whose behavior is the workflow playbook w.
func (c *compiler) playbookWorkflow(a *ir.Actor, w *resolved.WorkflowPlaybook) mapping {
	name := a.Name.Value
	params := c.params(a)
	// The jobs run no model: they read the repository and hold what the capabilities grant,
	// without the agent job's read baseline.
	perms := Permissions{"contents": Read}
	for _, cp := range a.Capabilities {
		perms.merge(Grant(cp.Name))
	}

	var wf mapping
	wf.add("name", name)
	if hasDispatch(a) {
		wf.add("run-name", runName(a))
	}
	wf.add("on", c.on(a))
	wf.add("permissions", mapping{})
	wf.add("defaults", bashDefaults)

	var envs []string
	gatePerms := Permissions{}
	gatePerms.merge(perms)
	gatePerms.merge(gatePermissions)
	jobs := mapping{}
	cond := c.jobIf(a)
	parts := playbookJobs(w)
	k := 0 // the workflow step counter, for step ids
	for i, pj := range parts {
		env := make(mapping, 0, len(params)+6)
		c.paramEnv(&env, a)
		env.add("AUTONOMY_ACTOR", name)
		env.add("AUTONOMY_BEHAVIOR", literalValue(behaviorPath(a)))
		env.add(substrates.PolicyEnv, substrates.PolicyPath)
		env.add("GH_TOKEN", expr("github.token"))
		job := mapping{}
		jobName := name + " (steps)"
		if pj.gate != nil {
			prompt := pj.gate.Prompt
			if prompt == "" {
				prompt = "approve " + pj.gate.Spec.ID + "?"
			}
			jobName = fmt.Sprintf("%s: %s (approval %s)", name, prompt, pj.gate.Spec.ID)
		}
		job.add("name", literalValue(jobName))
		if i == 0 {
			job.add("if", expr(cond))
		} else {
			job.add("needs", plain(parts[i-1].id))
			job.add("if", expr(pausedGuard))
			env.add(playbookDataEnv, expr("needs."+parts[i-1].id+".outputs.data"))
		}
		gateName := ""
		if pj.gate != nil {
			gateName = EnvironmentName(name, pj.gate.Spec.ID)
			envs = append(envs, gateName)
			job.add("environment", gateName)
		}
		job.add("runs-on", runsOn(c.box.runsOn))
		if a.Timeout.Pos.IsSet() {
			job.add("timeout-minutes", a.Timeout.Value)
		}
		if pj.gate != nil {
			job.add("permissions", c.permissions(gatePerms))
		} else {
			job.add("permissions", c.permissions(perms))
		}
		if i == 0 {
			job.add("concurrency", concurrency(name, c.subject(a), cond))
		}
		steps := seq{
			checkout.step("Check out the repository", mapping{{key: "persist-credentials", value: false}}),
			c.toolStep(),
		}
		if pj.gate != nil {
			steps = append(steps, mapping{
				{key: "name", value: gateStepName},
				{key: "env", value: mapping{{key: gateEnv, value: gateName}}},
				{key: "run", value: literal(gateScript)},
			})
		}
		last := ""
		for _, s := range pj.steps {
			k++
			spec, _ := json.Marshal(s.Spec)
			last = fmt.Sprintf("step-%d", k)
			title := s.Spec.ID + " (" + s.Spec.Namespace + ")"
			if s.Spec.Approval {
				title += ", approved"
			}
			senv := mapping{{key: playbookStepEnv, value: literalValue(string(spec))}}
			// A secret handle reaches the one step that reads it, from the repository's
			// secret of that name (GitHub masks it in the log; the record redacts it).
			for _, name := range s.Spec.Secrets {
				senv.add(name, expr("secrets."+name))
			}
			steps = append(steps, mapping{
				{key: "name", value: literalValue(title)},
				{key: "id", value: plain(last)},
				{key: "env", value: senv},
				{key: "run", value: literal(playbookStepScript)},
			})
		}
		if i+1 < len(parts) {
			job.add("outputs", mapping{{key: "data", value: expr("steps." + last + ".outputs.data")}})
		}
		job.add("env", env)
		job.add("steps", steps)
		jobs.add(pj.id, job)
	}
	wf.add("jobs", jobs)
	c.actors = append(c.actors, actorManifest{
		Name: name, Kind: "agent", Workflow: WorkflowPath(name), Behavior: behaviorPath(a),
		Capabilities: capabilityStrings(a), Permissions: perms, Triggers: c.shapeOf(a).triggers, Params: params, shape: c.shapeOf(a),
		Timeout: a.Timeout.Value, Environments: envs,
	})
	return wf
}
