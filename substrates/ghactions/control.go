package ghactions

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// Operating the fleet from GitHub. An issue_comment trigger fires its actor only on a command,
// a comment whose first line starts with "/agent <actor>" (then a space, a line break or its
// end), from a trusted author; a trigger whose config sets plain_comments: true fires on any
// trusted comment instead. The control workflow (one per installation) answers the operator's
// commands and sweeps the human asks; its logic is `autonomy gh control` and `autonomy gh sweep`.

// ControlWorkflowPath is the control workflow's file.
const ControlWorkflowPath = workflowDir + "/" + effect.ControlWorkflow

// PlainCommentsKey is the issue_comment config key that opts a trigger out of commands: true
// fires the actor on every comment from a trusted author, as GitHub's event does.
const PlainCommentsKey = "plain_comments"

// controlVerbs are the control workflow's own commands: an actor of one of these names cannot be
// addressed with /agent <actor>.
var controlVerbs = ghevent.ControlVerbs

// sweepCron is when the control workflow sweeps the open human asks.
const sweepCron = "*/15 * * * *"

// plainComments reports whether an actor's issue_comment triggers fire on plain comments.
func plainComments(a *ir.Actor) bool {
	for _, t := range a.Triggers {
		if t.Kind == ir.Event && t.Event.Value == "issue_comment" && t.Config != nil {
			if v := configValue(t.Config, PlainCommentsKey); v != nil && v.Value == "true" {
				return true
			}
		}
	}
	return false
}

// commanded reports whether comments fire the actor as /agent <actor> commands.
func commanded(a *ir.Actor) bool {
	for _, t := range a.Triggers {
		if t.Kind == ir.Event && t.Event.Value == "issue_comment" {
			return !plainComments(a)
		}
	}
	return false
}

func configValue(config *yaml.Node, key string) *yaml.Node {
	if config == nil || config.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(config.Content); i += 2 {
		if config.Content[i].Value == key {
			return config.Content[i+1]
		}
	}
	return nil
}

// withoutOurKeys is an event's config as GitHub reads it: without plain_comments, which is ours.
func withoutOurKeys(config *yaml.Node) *yaml.Node {
	if configValue(config, PlainCommentsKey) == nil {
		return config
	}
	c := *config
	c.Content = nil
	for i := 0; i+1 < len(config.Content); i += 2 {
		if config.Content[i].Value != PlainCommentsKey {
			c.Content = append(c.Content, config.Content[i], config.Content[i+1])
		}
	}
	if len(c.Content) == 0 {
		return nil
	}
	return &c
}

// commandCond is true on a comment whose first line starts with "/agent <name>" followed by a
// space, a line break or the comment's end; commandCond("") on any /agent command: ghevent.Addressed
// as an expression.
func commandCond(name string) string {
	const body = "github.event.comment.body"
	cmd := ghevent.CommandPrefix(name)
	return "(startsWith(format('{0} ', " + body + "), '" + cmd + " ') || startsWith(" + body + ", fromJSON('\"" + cmd + "\\n\"')) || startsWith(" + body + ", fromJSON('\"" + cmd + "\\r\\n\"')))"
}

// controlWorkflow builds the control workflow: a command job on every comment that starts with
// /agent (whoever wrote it: an untrusted author is answered with a refusal), and a sweep job on a
// schedule. Neither runs a model; both run the autonomy binary installed at the compiling
// version.
func (c *compiler) controlWorkflow() mapping {
	var actors, cmds []string
	for _, a := range c.p.Actors {
		name := a.Name.Value
		actors = append(actors, name)
		if commanded(c.byName[name]) {
			if slices.Contains(controlVerbs, name) {
				c.warnf(a.Name.Pos, "rename the actor", "actor %q: /agent %s is a control command, so comments cannot address this actor", name, name)
				continue
			}
			cmds = append(cmds, name)
		}
	}
	var on mapping
	on.add("issue_comment", mapping{{key: "types", value: seq{"created"}}})
	// The human gate (effect/humangate.go): a pull request's new head, and a review of it.
	on.add("pull_request_target", mapping{{key: "types", value: seq{"opened", "synchronize", "reopened", "edited"}}})
	on.add("pull_request_review", mapping{{key: "types", value: seq{"submitted", "dismissed"}}})
	on.add("schedule", seq{mapping{{key: "cron", value: sweepCron}}})
	// A dispatch with the gate's input posts a pull request's human gate (autonomy gh propose
	// dispatches it); one without sweeps.
	gateInput := mapping{{key: "description", value: "the pull request whose human gate to post (autonomy gh propose sets it)"}, {key: "required", value: false}, {key: "type", value: "string"}}
	on.add("workflow_dispatch", mapping{{key: "inputs", value: mapping{{key: effect.GateInput, value: gateInput}}}})

	var wf mapping
	wf.add("name", "autonomy control")
	wf.add("on", on)
	wf.add("permissions", mapping{})
	wf.add("defaults", bashDefaults)
	// A run waiting in a group is replaced by the next one: each command has a group of its own
	// (no comment, an outsider's included, displaces a maintainer's command), the gate runs
	// of one pull request share one (the latest evaluates the current head, so dropping a
	// waiting one loses nothing), and the sweeps one (two never escalate at once).
	wf.add("concurrency", mapping{{key: "group", value: expr("format('autonomy-control-{0}', github.event_name == 'issue_comment' && github.run_id || github.event.pull_request.number || inputs." + effect.GateInput + " || github.event_name)")}, {key: "cancel-in-progress", value: false}})

	common := func(env mapping) mapping {
		env.add(substrates.PolicyEnv, substrates.PolicyPath)
		env.add("GH_TOKEN", expr("github.token"))
		return env
	}
	steps := func(verb string) seq {
		return seq{
			// The default branch's policy, whatever ref a dispatch or a pull request's event
			// names: the gate must not read its rules from a branch an agent pushed.
			checkout.step("Check out the policy", mapping{{key: "ref", value: expr("github.event.repository.default_branch")}, {key: "persist-credentials", value: false}, {key: "sparse-checkout", value: dataDir}}),
			c.toolStep(),
			mapping{{key: "name", value: "autonomy gh " + verb}, {key: "run", value: literal(`"$AUTONOMY_BIN" gh ` + verb + "\n")}},
		}
	}
	// Commands: status and the ask's resolution write comments and reactions (issues); the
	// resolution of a human-required ask posts the human gate (statuses); cancel and retry act
	// on runs (actions); nothing here reads or writes code.
	perms := Permissions{"contents": Read, "issues": Write, "pull-requests": Write, "actions": Write, "statuses": Write}
	var env mapping
	env.add("AUTONOMY_COMMENT", expr("github.event.comment.body"))
	env.add("AUTONOMY_COMMENT_ID", expr("github.event.comment.id"))
	env.add("AUTONOMY_COMMENT_URL", expr("github.event.comment.html_url"))
	env.add("AUTONOMY_ITEM", expr("github.event.issue.number"))
	env.add("AUTONOMY_BY", expr("github.event.comment.user.login"))
	env.add("AUTONOMY_ASSOCIATION", expr("github.event.comment.author_association"))
	env.add("AUTONOMY_ACTORS", strings.Join(actors, " "))
	env.add("AUTONOMY_COMMANDED", strings.Join(cmds, " "))
	env.add("AUTONOMY_ROLES", strings.Join(c.box.roles, " "))
	var elicits []string
	for _, m := range c.actors {
		if m.Elicits {
			elicits = append(elicits, m.Name)
		}
	}
	if len(elicits) > 0 {
		env.add("AUTONOMY_ELICITS", strings.Join(elicits, " "))
	}
	command := mapping{}
	command.add("name", "answer the command")
	// The bot's own replies never start with /agent; a comment by any bot is not a command.
	command.add("if", expr(pausedGuard+" && github.event_name == 'issue_comment' && "+
		commandCond("")+" && "+
		"github.event.comment.user.type != 'Bot'"))
	command.add("runs-on", runsOn(c.box.runsOn))
	command.add("timeout-minutes", 10)
	command.add("permissions", perms.yaml())
	command.add("env", common(env))
	command.add("steps", steps("control"))

	sweep := mapping{}
	sweep.add("name", "escalate the open human asks")
	sweep.add("if", expr(pausedGuard+" && (github.event_name == 'schedule' || github.event_name == 'workflow_dispatch' && inputs."+effect.GateInput+" == '' && "+onDefaultBranch+")"))
	sweep.add("runs-on", runsOn(c.box.runsOn))
	sweep.add("timeout-minutes", 10)
	sweep.add("permissions", Permissions{"contents": Read, "issues": Write}.yaml())
	sweep.add("env", common(mapping{}))
	sweep.add("steps", steps("sweep"))
	wf.add("jobs", mapping{{key: "command", value: command}, {key: "sweep", value: sweep}, {key: "human-gate", value: c.humanGateJob(common, steps)}})
	return wf
}

// onDefaultBranch is true when a dispatch runs the default branch's workflow.
const onDefaultBranch = "github.ref == format('refs/heads/{0}', github.event.repository.default_branch)"

// humanGateJob posts the human gate of a pull request on its events (autonomy gh human-gate).
// It is not paused with the fleet: it runs no model, and people's pull requests wait on it. On
// pull_request_target it checks out the default branch's policy, never the pull request's code.
func (c *compiler) humanGateJob(common func(mapping) mapping, steps func(string) seq) mapping {
	var env mapping
	env.add("AUTONOMY_SUBJECT", expr("github.event.pull_request.number || inputs."+effect.GateInput))
	if c.gated() {
		env.add("AUTONOMY_HUMAN_REQUIRED_PATHS", HumanRequiredPath)
	}
	job := mapping{}
	job.add("name", "post the human gate of the pull request")
	job.add("if", expr("github.event_name == 'pull_request_target' || github.event_name == 'pull_request_review' || github.event_name == 'workflow_dispatch' && inputs."+effect.GateInput+" != '' && "+onDefaultBranch))
	job.add("runs-on", runsOn(c.box.runsOn))
	job.add("timeout-minutes", 10)
	job.add("permissions", Permissions{"contents": Read, "pull-requests": Read, "statuses": Write}.yaml())
	job.add("env", common(env))
	job.add("steps", steps("human-gate"))
	return job
}

// control emits the control workflow.
func (c *compiler) control() {
	c.add(c.workflowFile(ControlWorkflowPath, c.controlWorkflow()), "the control workflow", ir.Pos{})
}

// inputActor is the human actor the profile routes input-required to: its kind: human actor
// holding code:review (the standard's maintainer, whose approval resumes the merge gate), the
// first in the profile's order; "" when there is none. Found once per compile: every actor's
// effect env asks for it.
func (c *compiler) inputActor() string {
	if c.input == nil {
		name := ""
		for _, a := range c.p.Actors {
			if a.IsHuman() && a.Holds("code:review") {
				name = a.Name.Value
				break
			}
		}
		c.input = &name
	}
	return *c.input
}

// commandEnv tells the run step which params hold subject.text of an /agent <actor> comment
// (AUTONOMY_COMMAND_PARAMS) and how long the command is (AUTONOMY_COMMAND_LEN), so that
// commandScript gives the actor the rest of the comment, as the command's own text.
func commandEnv(env *mapping, a *ir.Actor) {
	if !commanded(a) {
		return
	}
	var names []string
	for _, t := range a.Triggers {
		if t.Kind != ir.Event || t.Event.Value != "issue_comment" {
			continue
		}
		for _, p := range t.Params {
			if p.Source.Value == "subject.text" && !slices.Contains(names, p.Name.Value) {
				names = append(names, p.Name.Value)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	env.add("AUTONOMY_COMMAND_PARAMS", strings.Join(names, " "))
	env.add("AUTONOMY_COMMAND_LEN", strconv.Itoa(len(ghevent.CommandPrefix(a.Name.Value))))
}

// commandScript cuts the command off each param AUTONOMY_COMMAND_PARAMS names when an
// issue_comment fired the job (whose if: checked that the comment starts with the command), then
// the white space after it. The names and the length are the compiler's; the text is only
// expanded, never parsed.
const commandScript = `if [ "${GITHUB_EVENT_NAME:-}" = issue_comment ] && [ -n "${AUTONOMY_COMMAND_PARAMS:-}" ]; then
  for p in ${AUTONOMY_COMMAND_PARAMS}; do
    v="${!p}"
    v="${v:AUTONOMY_COMMAND_LEN}"
    v="${v#"${v%%[![:space:]]*}"}"
    export "${p}=${v}"
  done
fi
`
