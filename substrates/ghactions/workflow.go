package ghactions

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	agents "github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/cron"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/control"
)

// checkout is actions/checkout, pinned to a full commit SHA; the comment names its version.
var checkout = action{"actions/checkout", "08c6903cd8c0fde910a37f88322edcfb5dd907a8", "v5.0.0"}

// action is a third-party action pinned to a commit.
type action struct{ repo, sha, version string }

func (a action) step(name string, with mapping) mapping {
	s := mapping{{key: "name", value: name}, {key: "uses", value: plain(a.repo + "@" + a.sha), comment: a.version}}
	if len(with) > 0 {
		s.add("with", with)
	}
	return s
}

// expr wraps a GitHub expression.
func expr(e string) plain { return plain("${{ " + e + " }}") }

// literalValue makes a profile value reach the job as the same text: GitHub evaluates ${{ in any
// env value, so the opening is written as an expression producing it.
func literalValue(s string) string {
	return strings.ReplaceAll(s, "${{", "${{ '${{' }}")
}

// bashDefaults runs every script with bash (-e, -o pipefail), shared by every workflow.
var bashDefaults = mapping{{key: "run", value: mapping{{key: "shell", value: plain("bash")}}}}

// pausedGuard skips every job while the repository variable AUTONOMY_PAUSED is true: the
// fleet's kill switch.
const pausedGuard = "vars.AUTONOMY_PAUSED != 'true'"

// rolesJSON is the trusted author associations as a JSON array literal for fromJSON.
func (c *compiler) rolesJSON() string {
	if c.roles == "" {
		c.roles = `["` + strings.Join(c.box.roles, `","`) + `"]`
	}
	return c.roles
}

// onOf builds the workflow's triggers: cron → schedule, dispatch → workflow_dispatch with one
// input per forwarded param and the correlation input, events verbatim with same-event configs
// merged. It reads a's triggers only (shape.go).
func (c *compiler) onOf(a *ir.Actor) mapping {
	var on mapping
	var schedules seq
	var crons, eventOrder []string
	var configs [][]*yaml.Node // per event of eventOrder
	hasDispatch := false
	for _, t := range a.Triggers {
		switch t.Kind {
		case ir.Cron:
			// GitHub's day of the week is 0-6: a Sunday written 7 is written 0.
			if v := cron.PortableOf(t.Cron.Value); !slices.Contains(crons, v) {
				crons = append(crons, v)
				schedules = append(schedules, mapping{{key: "cron", value: v}})
			}
		case ir.Dispatch:
			hasDispatch = true
		case ir.Event:
			ev := t.Event.Value
			if ev == "schedule" || ev == "workflow_dispatch" {
				continue // refused by event(): cron and dispatch compile to these
			}
			k := slices.Index(eventOrder, ev)
			if k < 0 {
				eventOrder = append(eventOrder, ev)
				configs = append(configs, nil)
				k = len(eventOrder) - 1
			}
			configs[k] = append(configs[k], withoutOurKeys(t.Config))
		}
	}
	if hasDispatch {
		inputs := mapping{}
		for _, p := range dispatchInputs(a) {
			inputs.add(p.Name.Value, mapping{
				{key: "description", value: p.Source.Value},
				{key: "type", value: plain("string")},
			})
		}
		inputs.add(correlationInput, mapping{
			{key: "description", value: "Set by the launcher, echoed in the run name, to find this run"},
			{key: "type", value: plain("string")},
		})
		on.add("workflow_dispatch", mapping{{key: "inputs", value: inputs}})
	}
	if len(schedules) > 0 {
		on.add("schedule", schedules)
	}
	for k, ev := range eventOrder {
		merged := mergeConfigs(configs[k])
		if merged == nil {
			on.add(ev, plain("null"))
			continue
		}
		on.add(ev, merged)
	}
	return on
}

// concurrency is one group per actor and subject, under which a running session is never
// cancelled (GitHub still replaces a queued run by a newer one of the same group). A run its
// condition skips gets a group of its own, so it can never displace a queued one.
func concurrency(name, subject, cond string) mapping {
	if subject == "" {
		subject = "'none'"
	} else {
		subject += " || 'none'"
	}
	// One concatenation: the condition is most of the group, and a fleet has thousands.
	group := plain("${{ (" + cond + ") && format('autonomy-" + name + "-{0}', " + subject + ") || format('autonomy-" + name + "-skipped-{0}', github.run_id) }}")
	return mapping{{key: "group", value: group}, {key: "cancel-in-progress", value: false}}
}

// runName echoes the correlation input of a dispatched run.
func runName(a *ir.Actor) plain {
	name := a.Name.Value
	return plain("${{ inputs." + correlationInput + " && format('" + name + " [{0}]', inputs." + correlationInput + ") || '" + name + "' }}")
}

// agentWorkflow builds the workflow of a kind: agent actor.
func (c *compiler) agentWorkflow(a *ir.Actor) mapping {
	name := a.Name.Value
	r := c.realize(a)
	for _, u := range r.unexpressed {
		d := unexpressedWarning(a, u)
		c.warnf(d.Pos, d.Hint, "%s", d.Message)
	}
	params := c.params(a)

	sp, el := c.stepPlaybook(a) // steps.go
	elicits := el != nil
	if elicits {
		c.checkElicits(a, *el)
	}

	wf := make(mapping, 0, 6) // sized: a fleet builds thousands
	wf.add("name", name)
	if hasDispatch(a) {
		wf.add("run-name", runName(a))
	}
	on := c.on(a)
	if elicits {
		resumeInputs(&on)
	}
	wf.add("on", on)
	wf.add("permissions", mapping{})
	wf.add("defaults", bashDefaults)

	proposes, reviews := effects(a)
	env, reviewEnv := c.agentEnv(a, params, sp, elicits, proposes)
	steps := c.agentSteps(a, sp, elicits, proposes, reviews)

	job := make(mapping, 0, 11)
	job.add("name", name)
	var cond string
	if elicits && !hasDispatch(a) {
		cond = c.jobIf(a, dispatchOnDefault) // the resume is a dispatch
	} else {
		cond = c.jobIf(a)
	}
	subject, groupCond := c.subject(a), cond
	if elicits {
		// A resume runs the agent after the resume job handed it the answered run; any other
		// run, with the resume job skipped. A resumed run has a concurrency group of its own (its
		// pause is already spent: a later run of the item must not displace it while it is
		// queued), and a refused resume takes one too.
		gate := "(needs.resume.result == 'skipped' && !inputs." + control.ResumeAskInput + " || needs.resume.outputs.continue == 'true')"
		job.add("needs", plain("resume"))
		job.add("if", expr("!cancelled() && "+gate+" && "+cond))
		subject, groupCond = "inputs."+control.ResumeAskInput+" && format('resumed-{0}', inputs."+control.ResumeRunInput+") || "+orEmpty(subject), gate+" && "+cond
	} else {
		job.add("if", expr(cond))
	}
	job.add("runs-on", runsOn(c.box.runsOn))
	if a.Timeout.Pos.IsSet() {
		job.add("timeout-minutes", a.Timeout.Value)
	}
	job.add("permissions", c.permissions(r.perms))
	job.add("concurrency", concurrency(name, subject, groupCond))
	job.add("env", env)
	var outputs mapping
	if sp {
		outputs.add(StepsStatusOutput, expr("steps.run.outputs."+StepsStatusOutput))
	}
	if applies(a, sp) && c.pausedStep(a, c.installsTool(a)) != nil {
		outputs.add(pausedStepID, expr("steps."+pausedStepID+".outcome")) // the apply job reads it
	}
	if outputs != nil {
		job.add("outputs", outputs)
	}
	job.add("steps", steps)
	jobs := append(make(mapping, 0, 4), kv{key: "agent", value: job})
	if elicits {
		jobs = mapping{{key: "resume", value: c.resumeJob(a)}, {key: "agent", value: job}, {key: "ask", value: c.askJob(a)}}
	}
	if proposes {
		penv := c.effectEnv(a, env)
		if scope := c.proposeScope(a); scope != "" {
			reviewEnv = append(reviewEnv, kv{key: "AUTONOMY_PROPOSE_SCOPE", value: literalValue(scope)})
		}
		penv = append(penv[:len(penv)-1], append(reviewEnv, penv[len(penv)-1])...)
		jobs.add("propose", c.effectJob(a, "propose", penv))
	}
	if reviews {
		jobs.add("review", c.effectJob(a, "review", c.effectEnv(a, env)))
	}
	applyJob := applies(a, sp)
	if applyJob {
		jobs.add("apply", c.applyJob(a, c.effectEnv(a, env))) // safeoutputs.go
	}
	wf.add("jobs", jobs)

	c.actors = append(c.actors, actorManifest{
		Name: name, Kind: "agent", Workflow: WorkflowPath(name), Behavior: c.agentBehavior(a),
		Capabilities: capabilityStrings(a), Permissions: r.perms, Triggers: c.shapeOf(a).triggers, Params: params, shape: c.shapeOf(a),
		Reviewer: a.Review.Value, Timeout: a.Timeout.Value, Effects: effectKinds(proposes, reviews),
	})
	if applyJob {
		m := &c.actors[len(c.actors)-1]
		m.Effects, m.applyGrant = append(m.Effects, "apply"), applyGrant(a)
		manifestResult(a, m) // safeoutputs.go
	}
	if elicits {
		m := &c.actors[len(c.actors)-1]
		m.Effects, m.Elicits = append([]string{"resume", "ask"}, m.Effects...), true
	}
	return wf
}

// agentEnv is the agent job's env, and the reviewer's part of it that the propose job carries.
func (c *compiler) agentEnv(a *ir.Actor, params []param, steps, elicits, proposes bool) (env, reviewEnv mapping) {
	env = make(mapping, 0, len(params)+16)
	c.paramEnv(&env, a)
	commandEnv(&env, a)
	env.add("AUTONOMY_ACTOR", a.Name.Value)
	env.add("AUTONOMY_BEHAVIOR", literalValue(c.agentBehavior(a)))
	env.add("AUTONOMY_CAPABILITIES", capabilityList(a))
	if c.box.model != "" {
		env.add("AUTONOMY_MODEL", literalValue(c.box.model))
	}
	if a.Review.Value != "" {
		if rv := c.byName[a.Review.Value]; rv != nil {
			c.reviewEdge(a, rv, &reviewEnv)
		}
	}
	if a.Execution != nil && a.Execution.Workspace.Value != "" {
		env.add("AUTONOMY_WORKSPACE", a.Execution.Workspace.Value)
	}
	if res := resultPath(a); res != "" {
		env.add("AUTONOMY_RESULT_SCHEMA", literalValue(res))
		c.resultSchema(a, res)
	}
	if c.gated() {
		env.add("AUTONOMY_HUMAN_REQUIRED_PATHS", HumanRequiredPath)
	}
	env.add(substrates.PolicyEnv, substrates.PolicyPath)
	if callsRunner(a) || a.Skill {
		env.add(SubstrateEnv, Name) // runnerjob.go; a skill's launch is an effect (safeoutputs.go)
	}
	if steps {
		env.add("AUTONOMY_ARGS_ENV", argsEnv(params))
		if elicits {
			env.add("AUTONOMY_RESUME_ASK", expr("inputs."+control.ResumeAskInput))
		}
	}
	if proposes {
		env.add("GIT_AUTHOR_NAME", literalValue(c.box.gitName))
		env.add("GIT_AUTHOR_EMAIL", literalValue(c.box.gitEmail))
		env.add("GIT_COMMITTER_NAME", literalValue(c.box.gitName))
		env.add("GIT_COMMITTER_EMAIL", literalValue(c.box.gitEmail))
	}
	return env, reviewEnv
}

// agentSteps is the agent job's steps.
func (c *compiler) agentSteps(a *ir.Actor, sp, elicits, proposes, reviews bool) (steps seq) {
	steps, refused := c.lifecycleSteps(a) // lifecycle.go
	if refused {
		return steps
	}
	// The agent is installed before the checkout, so no install script runs while the job
	// token sits in git's config; the checkout never keeps it there: the agent pushes nothing.
	if a.Skill && len(c.box.install) > 0 {
		if c.installStep == nil {
			c.installStep = c.emit.sharedMap(mapping{
				{key: "name", value: "Install the agent"},
				{key: "env", value: argvEnv("AUTONOMY_INSTALL_", c.box.install)},
				{key: "run", value: literal(argvScript("AUTONOMY_INSTALL_", len(c.box.install), ""))},
			})
		}
		steps = append(steps, c.installStep)
	}
	if needsBun(a) {
		steps = append(steps, c.sharedStep("bun", func() mapping { return setupBun.step("Install Bun for the script", nil) }))
	}
	weaves := !sp && c.weaves(a) // weave.go; a step playbook is not a skill to weave into
	model := a.Skill || sp
	if callsRunner(a) || weaves || model {
		// A model's job installs autonomy for its model proxy (modelproxy.go), a skill's agent
		// for autonomy's MCP server (safeoutputs.go); the Runner's client too.
		steps = append(steps, c.toolStep()) // runnerjob.go
	}
	steps = append(steps, c.sharedStep("checkout", func() mapping {
		return checkout.step("Check out the repository", mapping{{key: "persist-credentials", value: false}})
	}))
	check := c.pausedStep(a, callsRunner(a) || weaves || model) // paused.go
	checked := len(steps)
	if check != nil {
		steps = append(steps, check)
	}
	if model {
		steps = append(steps, c.guardSteps()...) // egress.go
	}
	switch {
	case weaves:
		steps = append(steps, c.weaveStep(a), wovenRunStep(c.runStep(a)))
	case sp:
		steps = append(steps, c.stepsRunSteps(a, elicits)...) // steps.go
	default:
		steps = append(steps, c.runStep(a))
	}
	if applies(a, sp) {
		steps = append(steps, c.sharedStep("upload outputs", uploadOutputsStep)) // safeoutputs.go
	}
	steps = append(steps, c.exportSteps(proposes, reviews)...)
	if model {
		steps = append(steps, c.usageSteps()...)
	}
	if model {
		steps = append(steps, c.sharedStep("disarm", disarmStep)) // egress.go
	}
	if check != nil {
		steps = append(steps[:checked+1], c.afterPauseCheck(steps[checked+1:])...)
	}
	return steps
}

// runStep runs the behavior: a skill through the box's agent command with the skill on stdin, a
// script by its interpreter. The model credential is in a skill's step env only: a script runs
// no model, so its job neither holds the secret nor mints a token.
func (c *compiler) runStep(a *ir.Actor) mapping { return c.runStepOf(a, false) }

// runStepOf is runStep, or with steps the run step of a step playbook (steps.go): the box's
// agent, with the skill's credential, runs it through autonomy playbook run.
func (c *compiler) runStepOf(a *ir.Actor, steps bool) mapping {
	kind := scriptKey(a)
	if a.Skill && a.Result != nil {
		kind += ":result"
		if verifiedResult(a) {
			kind += ":verified"
		}
	} else if defaultResult(a) {
		kind += ":default-result"
	} else if verifiedResult(a) {
		kind += ":verified" // a script whose apply job verifies its result
	} else if _, reviews := effects(a); reviews && !a.Skill {
		kind += ":verdict" // a script reviewer whose review job reads its verdict
	}
	model := a.Skill || steps
	if steps {
		kind = "steps"
	}
	// The env and script depend only on the box and the kind of behavior: built once per
	// compile and shared by every workflow (the emitter only reads them).
	if c.runParts[kind].env == nil {
		env := mapping{}
		var script strings.Builder
		if model {
			// The credential stays in the model proxy's step (modelproxy.go): this step gets,
			// through $GITHUB_ENV, the proxy's URL as AUTONOMY_MODEL_URL and a placeholder key
			// under the credential's name, and points the agent at the proxy.
			env.add("AUTONOMY_MODEL_URL_ENV", c.box.credential.baseURLEnv)
			script.WriteString(modelURLScript)
		}
		env.add("GH_TOKEN", expr("github.token"))
		// The agent prints text it read from outsiders: GitHub must not take any of it for a
		// workflow command (::add-mask::, ::error::, ::stop-commands::).
		script.WriteString(stopCommands)
		script.WriteString(commandScript)
		if steps {
			c.stepsAgentScript(&env, &script)
			script.WriteString(stepsRunScript)
		} else if a.Skill {
			c.agentScript(a, &env, &script)
		} else {
			argv := scriptCommand(a.Script)
			env = append(env, argvEnv("AUTONOMY_RUN_", argv)...)
			verified := verifiedResult(a)
			if verified {
				script.WriteString(scriptResultScript) // safeoutputs.go
			} else if _, reviews := effects(a); reviews {
				script.WriteString(scriptVerdictScript) // safeoutputs.go
			}
			script.WriteString(argvScript("AUTONOMY_RUN_", len(argv), ` "$AUTONOMY_BEHAVIOR"`))
			if verified {
				script.WriteString(scriptOutputsScript)
			}
		}
		if !steps { // the steps script turns the commands back on itself, before its report
			script.WriteString(`echo "::${stop}::"` + "\n")
		}
		c.runParts[kind] = runParts{c.emit.sharedMap(env), literal(script.String())}
	}
	rp := c.runParts[kind]
	return mapping{{key: "name", value: "Run " + a.Name.Value}, {key: "env", value: rp.env}, {key: "run", value: rp.script}}
}

// modelURLScript points the agent at the model proxy, whose base URL the proxy's step left in
// AUTONOMY_MODEL_URL.
const modelURLScript = `if [ -n "${AUTONOMY_MODEL_URL:-}" ]; then
  export "${AUTONOMY_MODEL_URL_ENV}=${AUTONOMY_MODEL_URL}"
fi
`

// agentScript runs the box's agent on the skill. A preset's placeholders become references to
// the step's own variables; a claude-json preset's output is read with jq into AUTONOMY_RESULT.
func (c *compiler) agentScript(a *ir.Actor, env *mapping, script *strings.Builder) {
	ch := c.box.agent
	argv := ch.Argv
	if !ch.Custom() {
		argv = ch.Preset.Argv(agents.Options{Model: c.box.model, Sandbox: agents.Sandbox{None: true}, Result: a.Result != nil})
	}
	words := make([]string, len(argv))
	var literalWords []string
	for i, w := range argv {
		switch w {
		case agents.Result:
			words[i] = `"$AUTONOMY_RESULT"`
		case agents.Schema:
			words[i] = `"$RUNNER_TEMP/autonomy-result-schema.json"`
		case agents.SchemaJSON:
			words[i] = `"$schema"`
		case agents.Proxy:
			words[i] = `"${proxy[@]}"`
		case agents.MCP:
			words[i] = `"${mcp[@]}"`
		default:
			name := fmt.Sprintf("AUTONOMY_AGENT_%d", len(literalWords))
			literalWords = append(literalWords, w)
			words[i] = `"$` + name + `"`
		}
	}
	if !ch.Custom() {
		for _, kv := range slices.Concat(ch.Preset.VMEnv, ch.Preset.MCPEnv) {
			k, v, _ := strings.Cut(kv, "=")
			env.add(k, v)
		}
	}
	*env = append(*env, argvEnv("AUTONOMY_AGENT_", literalWords)...)
	// Where the agent's final message (or structured result) is left for the steps after it.
	script.WriteString(`export AUTONOMY_RESULT="$RUNNER_TEMP/autonomy-result.json"` + "\n")
	// Where the MCP server records the effects the model asks for (safeoutputs.go).
	script.WriteString(outputsScript)
	script.WriteString(shimsScript) // safeoutputs.go
	if slices.Contains(argv, agents.MCP) {
		c.mcpWords(script)
	}
	if ch.Custom() {
		script.WriteString(mcpConfigScript()) // safeoutputs.go
	}
	if slices.Contains(argv, agents.Proxy) {
		// The words that point the CLI at the model proxy, when the job has one.
		script.WriteString("proxy=()\n" + `if [ -n "${AUTONOMY_MODEL_URL:-}" ]; then` + "\n  proxy=(")
		const sentinel = "\x00url\x00"
		for i, w := range ch.Preset.ProxyArgs(sentinel) {
			if i > 0 {
				script.WriteByte(' ')
			}
			before, after, found := strings.Cut(w, strconv.Quote(sentinel))
			if !found {
				script.WriteString(shellQuote(w))
				continue
			}
			script.WriteString(shellQuote(before+`"`) + `"${AUTONOMY_MODEL_URL}"` + shellQuote(`"`+after))
		}
		script.WriteString(")\nfi\n")
	}
	if a.Result != nil && !ch.Custom() {
		// The schema as the agent is given it: without the DO NOT EDIT member, and without
		// $schema, which Claude Code's older-draft validator refuses.
		script.WriteString(`schema="$(jq -c 'del(.["//"], .["$schema"])' "$AUTONOMY_RESULT_SCHEMA")"` + "\n")
		script.WriteString(`printf '%s\n' "$schema" > "$RUNNER_TEMP/autonomy-result-schema.json"` + "\n")
	}
	words = c.jail(words, env)             // egress.go
	prompt := resultPrompt(a, env, script) // safeoutputs.go
	if verifiedResult(a) {
		defer script.WriteString(exportResultScript)
	}
	cmd := strings.Join(words, " ") + ` < ` + prompt
	if ch.Custom() || ch.Preset.Output != agents.OutputClaudeJSON {
		script.WriteString(cmd + "\n")
		return
	}
	out := `"$RUNNER_TEMP/autonomy-agent.json"`
	script.WriteString(cmd + " > " + out + "\n")
	script.WriteString(`jq -r '.result // ""' ` + out + "\n")
	script.WriteString(`jq -e '.is_error != true' ` + out + " > /dev/null\n")
	if a.Result != nil {
		script.WriteString(`jq -e '.structured_output' ` + out + ` > "$AUTONOMY_RESULT"` + "\n")
	} else {
		script.WriteString(`jq -r '.result // ""' ` + out + ` > "$AUTONOMY_RESULT"` + "\n")
	}
}

// runParts are the shared parts of a run step.
type runParts struct {
	env    mapping
	script literal
}

// oidcScript mints a GitHub OIDC token for the model proxy and hands it to the agent as its
// credential. Every value comes from env; the token is masked before anything could print it.
const oidcScript = `if [ -z "${AUTONOMY_OIDC_AUDIENCE}" ]; then
  echo "::error::no OIDC audience for the model proxy: set policy.box.gh-actions.oidc_audience, or the repository variable ` + OIDCAudienceVar + `"
  exit 1
fi
if [ -n "${AUTONOMY_MODEL_URL_ENV:-}" ] && [ -z "${AUTONOMY_MODEL_URL:-}" ]; then
  echo "::error::no model proxy host: set policy.box.gh-actions.proxy_host, or the repository variable ` + ProxyHostVar + `"
  exit 1
fi
token="$(curl -sSf --get -H "Authorization: bearer ${ACTIONS_ID_TOKEN_REQUEST_TOKEN}" --data-urlencode "audience=${AUTONOMY_OIDC_AUDIENCE}" "${ACTIONS_ID_TOKEN_REQUEST_URL}" | jq -r .value)"
echo "::add-mask::${token}"
export "${AUTONOMY_CREDENTIAL_ENV}=${token}"
if [ -n "${AUTONOMY_MODEL_URL:-}" ]; then
  export "${AUTONOMY_MODEL_URL_ENV}=${AUTONOMY_MODEL_URL}"
fi
# What this step starts (the model proxy) gets the one token minted, not the power to mint more.
unset ACTIONS_ID_TOKEN_REQUEST_TOKEN ACTIONS_ID_TOKEN_REQUEST_URL
`

// stopCommands turns off workflow commands for the rest of the step, with a token nobody can
// guess; the script turns them back on when the agent has finished.
const stopCommands = `stop="autonomy-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::${stop}"
`

// shellQuote quotes a word of our own (never profile text) for bash.
func shellQuote(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// argvEnv passes a command's words as env vars prefix0, prefix1, …: the script names only the
// variables, so no word is ever parsed by the shell.
func argvEnv(prefix string, argv []string) mapping {
	m := make(mapping, 0, len(argv))
	for i, w := range argv {
		m = append(m, kv{key: fmt.Sprintf("%s%d", prefix, i), value: literalValue(w)})
	}
	return m
}

// argvScript runs the command whose words argvEnv passed.
func argvScript(prefix string, n int, suffix string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, `"$%s%d"`, prefix, i)
	}
	b.WriteString(suffix)
	b.WriteByte('\n')
	return b.String()
}

func runsOn(labels []string) any {
	if len(labels) == 1 {
		return labels[0]
	}
	s := make(seq, len(labels))
	for i, l := range labels {
		s[i] = l
	}
	return s
}

func hasDispatch(a *ir.Actor) bool {
	for _, t := range a.Triggers {
		if t.Kind == ir.Dispatch {
			return true
		}
	}
	return false
}

// capabilityList is the actor's capabilities as written, scopes included, for the agent's env.
func capabilityList(a *ir.Actor) string { return strings.Join(capabilityStrings(a), " ") }

func capabilityStrings(a *ir.Actor) []string {
	out := make([]string, 0, len(a.Capabilities))
	for _, c := range a.Capabilities {
		out = append(out, c.Raw.Value)
	}
	return out
}

// reviewEdge hands a proposer its reviewer's workflow: a pull request the bot opens fires no
// pull_request event, so the proposer dispatches the review itself.
func (c *compiler) reviewEdge(a, rv *ir.Actor, env *mapping) {
	env.add("AUTONOMY_REVIEWER", rv.Name.Value)
	env.add("AUTONOMY_REVIEWER_WORKFLOW", rv.Name.Value+".yml")
	refInput := ""
	for _, p := range dispatchInputs(rv) {
		if p.Source.Value == "subject.ref" {
			refInput = p.Name.Value
			break
		}
	}
	if refInput == "" {
		c.warnf(a.Review.Pos, "give "+rv.Name.Value+" a trigger like: - { dispatch: true, params: { PR: subject.ref } }",
			"actor %q: its reviewer %q has no dispatch trigger forwarding subject.ref, so on gh-actions nothing can start the review of a pull request the bot opens (it fires no pull_request event)", a.Name.Value, rv.Name.Value)
		return
	}
	env.add("AUTONOMY_REVIEWER_REF_INPUT", refInput)
}
