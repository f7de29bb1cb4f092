package ghactions

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/control"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// A step playbook (seed 002) that is an actor's behavior runs in the actor's agent job through
// `autonomy playbook run`: one agent invocation per step, each seeing the outputs before it, with
// the box's agent (the same preset and credential as a skill's). Its ## ARTIFACTS are uploaded as
// the run's artifact "autonomy-artifacts".
//
// A step's @elicit parks the run for a person, through the human seam on the work item:
//  1. the agent job uploads the paused run's state (the artifact "autonomy-steps") and says
//     needs_input in its output "status";
//  2. the job "ask" (no model; issues: write) posts the elicitation on the work item as an ask of
//     the actor, naming the run (autonomy gh ask);
//  3. a maintainer answers it with /agent approve|reject|answer TOKEN, which the control
//     workflow checks against the elicitation's kind, records, and then dispatches this
//     workflow with the inputs autonomy_resume_run, _item and _ask;
//  4. in that run the job "resume" (no model; actions: read to download the other run's
//     artifact, issues: write to record the resume once) takes the answer from the
//     maintainer's own command, applies it to the paused run and hands it to the agent job
//     (the artifact "autonomy-resume"), which continues at the step after the elicitation.
// No step that finished runs again; a reject of an input or a select cancels the run.

// Artifacts and outputs of a step playbook's jobs.
const (
	// StepsArtifact is the paused run a run uploads; the resume deletes it once applied.
	StepsArtifact  = "autonomy-steps"
	resumeArtifact = "autonomy-resume"
	// askArtifact is the run's record of the ask its ask job posted (token, item, comment id).
	askArtifact    = "autonomy-ask"
	outputArtifact = "autonomy-artifacts"
	// StepsStatusOutput is the agent job's output saying how the playbook run ended (ok,
	// needs_input, cancelled or failed).
	StepsStatusOutput = "status"
)

// stepPlaybook reports whether the actor's behavior is a step playbook the job can run, and the
// position of its first @elicit (nil when it asks no one). Its errors are errors of the compile.
func (c *compiler) stepPlaybook(a *ir.Actor) (bool, *ir.Pos) {
	b := c.r.Behavior(a)
	if b.Kind != resolved.Steps {
		return false, nil
	}
	if !b.StepPlaybook() {
		for _, d := range b.Diagnostics {
			if d.Severity == ir.Error {
				c.errors = append(c.errors, d)
			}
		}
		return false, nil
	}
	return true, b.Elicit
}

// checkElicits reports what an actor whose step playbook asks a person needs on gh-actions: the
// power to post the ask (tasks:converse), a work item to post it on, and no code:propose (the
// job that resumes the run checks the repository out anew: changes made before the elicitation
// would be lost).
func (c *compiler) checkElicits(a *ir.Actor, el ir.Pos) {
	at := fmt.Sprintf("%s:%d:%d", filepath.Join(c.p.Dir, filepath.FromSlash(a.BehaviorFile)), el.Line, el.Col)
	if !a.Holds("tasks:converse") && !a.Holds("tasks:author") {
		c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: a.CapabilitiesPos, Severity: ir.Error,
			Message: fmt.Sprintf("actor %q: its step playbook asks a person (@elicit at %s), which on gh-actions is an ask on the work item, and the actor holds neither tasks:converse nor tasks:author", a.Name.Value, at),
			Hint:    "add tasks:converse to its capabilities"})
	}
	hasRef := false
	for _, t := range a.Triggers {
		for _, pr := range t.Params {
			hasRef = hasRef || pr.Source.Value == "subject.ref"
		}
	}
	if !hasRef {
		c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: a.TriggersPos, Severity: ir.Error,
			Message: fmt.Sprintf("actor %q: its step playbook asks a person (@elicit at %s), which on gh-actions is an ask on the work item, and no trigger forwards the work item (subject.ref)", a.Name.Value, at),
			Hint:    "forward the work item, e.g. params: { ITEM: subject.ref }"})
	}
	for _, cp := range a.Capabilities {
		if cp.Name == "code:propose" {
			c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: cp.Raw.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q: its step playbook asks a person (@elicit at %s); the run resumes in a new job with a fresh checkout, so the changes made before the elicitation would not be proposed", a.Name.Value, at),
				Hint:    "drop code:propose, or have another actor make the change once the answer is in"})
		}
	}
}

// resumeCond is true in a run dispatched to resume a paused step playbook run.
const resumeCond = "github.event_name == 'workflow_dispatch' && inputs." + control.ResumeAskInput + " != ''"

// defaultBranchCond holds for a run on the default branch (a dispatch can name any branch, whose
// workflow and playbook its dispatcher may have rewritten); dispatchOnDefault for a run that is
// not a dispatch, or is one on the default branch.
const (
	defaultBranchCond = "github.ref == format('refs/heads/{0}', github.event.repository.default_branch)"
	dispatchOnDefault = "(github.event_name != 'workflow_dispatch' || " + defaultBranchCond + ")"
)

// resumeInputs adds the inputs of a resume dispatch to the workflow's workflow_dispatch (which it
// adds, first, when the actor has none). It changes copies: on and what it holds may be shared
// (compiler.on).
func resumeInputs(on *mapping) {
	i := slices.IndexFunc(*on, func(kv kv) bool { return kv.key == "workflow_dispatch" })
	if i < 0 {
		*on = append(mapping{{key: "workflow_dispatch", value: mapping{{key: "inputs", value: mapping{}}}}}, *on...)
		i = 0
	} else {
		*on = slices.Clone(*on)
	}
	wd := slices.Clone((*on)[i].value.(mapping))
	(*on)[i].value = wd
	inputs := slices.Clone(wd[0].value.(mapping))
	for _, in := range []struct{ name, desc string }{
		{control.ResumeRunInput, "Set by the control workflow: the run whose paused playbook resumes"},
		{control.ResumeItemInput, "Set by the control workflow: the work item of its ask"},
		{control.ResumeAskInput, "Set by the control workflow: the token of the answered ask"},
	} {
		inputs.add(in.name, mapping{{key: "description", value: in.desc}, {key: "type", value: plain("string")}})
	}
	wd[0].value = inputs
}

// stepsRunScript runs or resumes the playbook in the agent's jail (autonomy gh jail: every
// step's agent runs inside it, behind the model proxy; the run's state and artifacts are the
// folders of RUNNER_TEMP it writes); the agent flags come before it. Every value comes from the
// environment.
const stepsRunScript = `state="$RUNNER_TEMP/` + StepsArtifact + `"
mkdir -p "$state" "$RUNNER_TEMP/` + outputArtifact + `"
rc=0
if [ -n "${AUTONOMY_RESUME_ASK:-}" ]; then
  if [ "${GITHUB_RUN_ATTEMPT:-1}" != 1 ]; then
    echo "::error::a resumed run is not run again: attempt 1 spent the answered pause; launch the actor anew"
    exit 1
  fi
  "$AUTONOMY_BIN" gh jail -- "$AUTONOMY_BIN" playbook resume --state "$state" --continue "$AUTONOMY_RESUME_ASK" --playbook "$AUTONOMY_BEHAVIOR" --workspace "$GITHUB_WORKSPACE" --sandbox none "${agent[@]}" --artifacts-dir "$RUNNER_TEMP/` + outputArtifact + `" --pause-file "$state/pause.json" > "$state/envelope.json" || rc=$?
else
  "$AUTONOMY_BIN" gh jail -- "$AUTONOMY_BIN" playbook run "$AUTONOMY_BEHAVIOR" --state "$state" --workspace "$GITHUB_WORKSPACE" --sandbox none "${agent[@]}" --args-env "$AUTONOMY_ARGS_ENV" --ignore-unknown-args --artifacts-dir "$RUNNER_TEMP/` + outputArtifact + `" --pause-file "$state/pause.json" > "$state/envelope.json" || rc=$?
fi
echo "::${stop}::"
status="$(jq -r 'if .ok then .status else "failed" end' "$state/envelope.json" 2> /dev/null || echo failed)"
echo "` + StepsStatusOutput + `=${status}" >> "$GITHUB_OUTPUT"
jq 'del(.requiresInput.resumeToken)' "$state/envelope.json" || true
echo "The playbook run: **${status}**" >> "$GITHUB_STEP_SUMMARY"
exit "$rc"
`

// stepsAgentScript sets the words choosing the agent: the box's preset (its version, the model
// from AUTONOMY_MODEL) or its own command as JSON.
func (c *compiler) stepsAgentScript(env *mapping, script *strings.Builder) {
	ch := c.box.agent
	c.egressEnv(env) // egress.go
	b, _ := json.Marshal([]string{StepsArtifact, outputArtifact})
	env.add(ghproxy.TempWriteEnv, literalValue(string(b)))
	if ch.Custom() {
		b, _ = json.Marshal(ch.Argv)
		env.add("AUTONOMY_AGENT_ARGV", literalValue(string(b)))
		script.WriteString(`agent=(--agent-argv "$AUTONOMY_AGENT_ARGV")` + "\n")
		return
	}
	for _, kv := range ch.Preset.VMEnv {
		k, v, _ := strings.Cut(kv, "=")
		env.add(k, v)
	}
	env.add("AUTONOMY_AGENT_PRESET", ch.Preset.Name)
	env.add("AUTONOMY_AGENT_VERSION", literalValue(ch.Preset.Version))
	script.WriteString(`agent=(--agent "$AUTONOMY_AGENT_PRESET" --agent-version "$AUTONOMY_AGENT_VERSION" --model "${AUTONOMY_MODEL:-}")` + "\n")
}

// argsEnv names the params a playbook run reads as its inputs.
func argsEnv(params []param) string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return strings.Join(names, ",")
}

// artifactIn names an artifact and the directory under $RUNNER_TEMP it is uploaded from or
// downloaded to.
func artifactIn(name, dir string) mapping {
	return mapping{{key: "name", value: name}, {key: "path", value: expr("runner.temp") + "/" + plain(dir)}}
}

// orFail adds to an upload's with: fail when there is nothing to upload.
func orFail(with mapping) mapping {
	return append(with, kv{key: "if-no-files-found", value: plain("error")})
}

// stepsRunSteps are the agent job's steps that run a step playbook (id run, whose output status
// says how the run ended) and upload what it left: its ## ARTIFACTS, and when it elicits, the
// paused run; a resume first downloads the answered run the resume job handed over.
func (c *compiler) stepsRunSteps(a *ir.Actor, elicits bool) seq {
	rs := c.runStepOf(a, true)
	run := append(mapping{rs[0], {key: "id", value: "run"}}, rs[1:]...)
	var out seq
	if elicits {
		out = append(out, withIf(downloadArtifact.step("Download the answered run", artifactIn(resumeArtifact, StepsArtifact)), "inputs."+control.ResumeAskInput+" != ''"))
	}
	out = append(out, run, withIf(uploadArtifact.step("Upload the playbook's artifacts",
		append(artifactIn(outputArtifact, outputArtifact), kv{key: "if-no-files-found", value: plain("ignore")})), "steps.run.outputs."+StepsStatusOutput+" == 'ok'"))
	if elicits {
		// Kept as long as the repository keeps artifacts: the ask can be answered until then.
		out = append(out, withIf(uploadArtifact.step("Upload the paused run", orFail(artifactIn(StepsArtifact, StepsArtifact))), "steps.run.outputs."+StepsStatusOutput+" == 'needs_input'"))
	}
	return out
}

// trustedEnv is the env of the resume and ask jobs: theirs, then the actor, the policy and the job
// token.
func trustedEnv(a *ir.Actor, env mapping) mapping {
	env.add("AUTONOMY_ACTOR", a.Name.Value)
	env.add(substrates.PolicyEnv, substrates.PolicyPath)
	env.add("GH_TOKEN", expr("github.token"))
	return env
}

// policyCheckout checks out the installed policy only.
var policyCheckout = checkout.step("Check out the policy", mapping{{key: "persist-credentials", value: false}, {key: "sparse-checkout", value: dataDir}})

// resumeJob is the job before the agent job of a run dispatched to resume a paused run: no model;
// autonomy gh resume checks the answer and hands the answered run to the agent job.
func (c *compiler) resumeJob(a *ir.Actor) mapping {
	name := a.Name.Value
	var env mapping
	env.add("AUTONOMY_RESUME_RUN", expr("inputs."+control.ResumeRunInput))
	env.add("AUTONOMY_RESUME_ITEM", expr("inputs."+control.ResumeItemInput))
	env.add("AUTONOMY_RESUME_ASK", expr("inputs."+control.ResumeAskInput))
	fromRun := func(name string) mapping {
		return append(artifactIn(name, name), kv{key: "run-id", value: expr("inputs." + control.ResumeRunInput)}, kv{key: "github-token", value: expr("github.token")})
	}
	job := mapping{}
	job.add("name", name+" (resume)")
	job.add("if", expr(pausedGuard+" && "+resumeCond+" && "+defaultBranchCond))
	job.add("runs-on", runsOn(c.box.runsOn))
	job.add("timeout-minutes", 10)
	job.add("permissions", c.permissions(effectGrants["resume"]))
	// One resume of a run at a time: the second finds its pause spent and refuses.
	job.add("concurrency", mapping{{key: "group", value: expr("format('autonomy-" + name + "-resume-{0}', inputs." + control.ResumeRunInput + ")")}, {key: "cancel-in-progress", value: false}})
	job.add("outputs", mapping{{key: "continue", value: expr("steps.resume.outputs.continue")}})
	job.add("env", trustedEnv(a, env))
	job.add("steps", seq{
		policyCheckout,
		downloadArtifact.step("Download the paused run", fromRun(StepsArtifact)),
		downloadArtifact.step("Download the record of its ask", fromRun(askArtifact)),
		c.toolStep(),
		mapping{{key: "name", value: "autonomy gh resume"}, {key: "id", value: "resume"},
			{key: "run", value: literal(`"$AUTONOMY_BIN" gh resume --state "$RUNNER_TEMP/` + StepsArtifact + `" --ask-record "$RUNNER_TEMP/` + askArtifact + `/ask.json" --out "$RUNNER_TEMP/` + resumeArtifact + `"` + "\n")}},
		withIf(uploadArtifact.step("Hand the answered run to the agent", orFail(artifactIn(resumeArtifact, resumeArtifact))), "steps.resume.outputs.continue == 'true'"),
	})
	return job
}

// askJob is the job after the agent job of a run whose playbook waits for a person: no model;
// autonomy gh ask posts the question on the work item and records the ask in the run's artifact.
func (c *compiler) askJob(a *ir.Actor) mapping {
	var env mapping
	env.add("AUTONOMY_SUBJECT", expr("inputs."+control.ResumeItemInput+" || "+orEmpty(c.subject(a))))
	job := mapping{}
	job.add("name", a.Name.Value+" (ask)")
	job.add("needs", plain("agent"))
	job.add("if", expr(pausedGuard+" && needs.agent.outputs."+StepsStatusOutput+" == 'needs_input'"))
	job.add("runs-on", runsOn(c.box.runsOn))
	job.add("timeout-minutes", 10)
	job.add("permissions", c.permissions(effectGrants["ask"]))
	job.add("env", trustedEnv(a, env))
	job.add("steps", seq{
		policyCheckout,
		downloadArtifact.step("Download the paused run", artifactIn(StepsArtifact, StepsArtifact)),
		c.toolStep(),
		mapping{{key: "name", value: "autonomy gh ask"}, {key: "run", value: literal(`"$AUTONOMY_BIN" gh ask --envelope "$RUNNER_TEMP/` + StepsArtifact + `/envelope.json" --record "$RUNNER_TEMP/` + askArtifact + `/ask.json"` + "\n")}},
		uploadArtifact.step("Upload the record of the ask", orFail(artifactIn(askArtifact, askArtifact))),
	})
	return job
}

// withIf gives a step a condition.
func withIf(step mapping, cond string) mapping {
	return append(mapping{step[0], {key: "if", value: plain(cond)}}, step[1:]...)
}
