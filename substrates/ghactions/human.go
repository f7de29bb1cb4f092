package ghactions

import (
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// The human seam on GitHub. A kind: human actor's workflow engages a person: when it fires it
// posts the ask (the situation the launcher sent and the actor's task spec) on the work item and
// applies the tracker label mapped to input-required. A resolution is recorded only from a
// trusted maintainer's command on that item ("/<actor> approve|reject|answer [note]"): the
// decision is written on the item, attributed. Nothing here moves a label or marks a task done:
// done is verified by whoever reads the resolution (the orchestrator), never presumed.

// engageScript posts the ask. Every value is env; nothing untrusted reaches stdout, where GitHub
// would read workflow commands in it.
const engageScript = `ask="${RUNNER_TEMP}/autonomy-ask.md"
{
  printf '<!-- autonomy:ask actor=%s -->\n' "${AUTONOMY_ACTOR}"
  printf '### Input required from %s\n\n' "${AUTONOMY_ACTOR}"
  if [ -n "${AUTONOMY_ASK:-}" ]; then
    printf '%s\n\n' "${AUTONOMY_ASK}"
  fi
  if [ -f "${AUTONOMY_BEHAVIOR}" ]; then
    cat "${AUTONOMY_BEHAVIOR}"
    printf '\n'
  fi
  printf 'To resolve, comment "%s approve", "%s reject" or "%s answer <text>" (allowed: %s).\n' "${AUTONOMY_COMMAND}" "${AUTONOMY_COMMAND}" "${AUTONOMY_COMMAND}" "${AUTONOMY_ROLES}"
} > "${ask}"
cat "${ask}" >> "${GITHUB_STEP_SUMMARY}"
ref="${AUTONOMY_SUBJECT_REF:-}"
case "${ref}" in
  '' | *[!0-9]*)
    echo "::warning::subject.ref is not a work item number; the ask is in this run's summary only"
    exit 0
    ;;
esac
gh api --method POST "repos/${GITHUB_REPOSITORY}/issues/${ref}/comments" -F "body=@${ask}" > /dev/null
gh api --method POST "repos/${GITHUB_REPOSITORY}/issues/${ref}/labels" -f "labels[]=${AUTONOMY_LABEL}" > /dev/null
`

// resolveScript records a trusted maintainer's command on an item with an open ask of this actor:
// an ask comment the workflow posted (the bot's, so nobody can forge one) with no resolution of
// it after. It records and nothing else: the label and the task's state are the orchestrator's to
// move once it has verified the outcome.
const resolveScript = `body="${AUTONOMY_COMMENT}"
line="${body%%$'\n'*}"
line="${line%$'\r'}"
verb=""
note=""
read -r _ verb note <<< "${line}" || true
case "${verb}" in
  approve | answer) ;;
  reject)
    if [ -z "${note}" ]; then
      echo "::error::reject needs a reason on the same line: ${AUTONOMY_COMMAND} reject <reason>"
      exit 1
    fi
    ;;
  *)
    echo "::error::unknown command: use ${AUTONOMY_COMMAND} approve, reject <reason> or answer <text>"
    exit 1
    ;;
esac
item="${AUTONOMY_ITEM}"
markers="$(gh api --paginate "repos/${GITHUB_REPOSITORY}/issues/${item}/comments" --jq '.[] | select(.user.login == "github-actions[bot]") | .body | split("\n")[0] | select(startswith("<!-- autonomy:"))')"
last="$(grep -F -e "<!-- autonomy:ask actor=${AUTONOMY_ACTOR} -->" -e "<!-- autonomy:resolution actor=${AUTONOMY_ACTOR} " <<< "${markers}" | tail -n 1 || true)"
case "${last}" in
  "<!-- autonomy:ask "*) ;;
  *)
    echo "::notice::no open ask of ${AUTONOMY_ACTOR} on this item; nothing recorded"
    exit 0
    ;;
esac
record="${RUNNER_TEMP}/autonomy-resolution.md"
{
  printf '<!-- autonomy:resolution actor=%s verb=%s by=%s -->\n' "${AUTONOMY_ACTOR}" "${verb}" "${AUTONOMY_BY}"
  printf 'Recorded for %s: **%s** by @%s (%s).\n' "${AUTONOMY_ACTOR}" "${verb}" "${AUTONOMY_BY}" "${AUTONOMY_COMMENT_URL}"
  if [ -n "${note}" ]; then
    printf '\n> %s\n' "${note}"
  fi
} > "${record}"
gh api --method POST "repos/${GITHUB_REPOSITORY}/issues/${item}/comments" -F "body=@${record}" > /dev/null
`

// humanWorkflow builds the workflow of a kind: human actor.
func (c *compiler) humanWorkflow(a *ir.Actor) mapping {
	name := a.Name.Value
	command := "/" + name
	params := resolveParams(a)
	// The person's ask and item come from the params declared with those sources.
	var ref, ask string
	for _, p := range params {
		switch {
		case p.Source == "subject.ref" && ref == "":
			ref = p.Expr
		case p.Source == "subject.text" && ask == "":
			ask = p.Expr
		}
	}
	writes := a.Holds("tasks:converse") || a.Holds("tasks:author")
	perms := Permissions{}
	perms.merge(baseline)
	if writes {
		perms["issues"] = Write
	} else {
		c.warnf(a.CapabilitiesPos, "grant tasks:converse so the workflow can post the ask and record the answer",
			"human actor %q holds neither tasks:converse nor tasks:author: on gh-actions its ask goes to the run summary only and no resolution can be recorded", name)
	}
	if ref == "" {
		c.warnf(a.TriggersPos, "forward the work item, e.g. params: { ITEM: subject.ref }",
			"human actor %q forwards no subject.ref: on gh-actions its ask goes to the run summary only", name)
	}

	on := c.on(a)
	resolves := writes
	if resolves {
		if _, ok := on.get("issue_comment"); !ok {
			on.add("issue_comment", mapping{{key: "types", value: seq{"created"}}})
		}
	}

	var wf mapping
	wf.add("name", name)
	if hasDispatch(a) {
		wf.add("run-name", runName(a))
	}
	wf.add("on", on)
	wf.add("permissions", mapping{})
	wf.add("defaults", bashDefaults)

	isCommand := "github.event_name == 'issue_comment' && startsWith(github.event.comment.body, '" + command + " ')"
	env := mapping{}
	paramEnv(&env, params)
	env.add("AUTONOMY_ACTOR", name)
	env.add("AUTONOMY_BEHAVIOR", literalValue(behaviorPath(a)))
	env.add("AUTONOMY_SUBJECT_REF", expr(orEmpty(ref)))
	env.add("AUTONOMY_ASK", expr(orEmpty(ask)))
	env.add("AUTONOMY_LABEL", literalValue(c.inputLabel))
	env.add("AUTONOMY_COMMAND", command)
	env.add("AUTONOMY_ROLES", strings.Join(c.box.roles, ", "))
	env.add("GH_TOKEN", expr("github.token"))
	engage := mapping{}
	engage.add("name", "engage "+name)
	// The engage job runs on the actor's own triggers only: a resolve command, or any other
	// comment when the actor declares no issue_comment trigger, is not an ask.
	notAsk := "github.event_name != 'issue_comment'"
	for _, t := range a.Triggers {
		if t.Kind == ir.Event && t.Event.Value == "issue_comment" {
			notAsk = "!(" + isCommand + ")"
		}
	}
	engageCond := c.jobIf(a, notAsk)
	engage.add("if", expr(engageCond))
	engage.add("runs-on", runsOn(c.box.runsOn))
	engage.add("timeout-minutes", 10)
	engage.add("permissions", perms.yaml())
	engage.add("concurrency", concurrency(name, subjectExpr(a), engageCond))
	engage.add("env", env)
	engage.add("steps", seq{
		checkout.step("Check out the task spec", mapping{{key: "persist-credentials", value: false}, {key: "sparse-checkout", value: dataDir}}),
		mapping{{key: "name", value: "Post the ask"}, {key: "run", value: literal(engageScript)}},
	})
	jobs := mapping{{key: "engage", value: engage}}

	if resolves {
		renv := mapping{}
		renv.add("AUTONOMY_ACTOR", name)
		renv.add("AUTONOMY_COMMAND", command)
		renv.add("AUTONOMY_COMMENT", expr("github.event.comment.body"))
		renv.add("AUTONOMY_COMMENT_URL", expr("github.event.comment.html_url"))
		renv.add("AUTONOMY_ITEM", expr("github.event.issue.number"))
		renv.add("AUTONOMY_BY", expr("github.event.comment.user.login"))
		renv.add("GH_TOKEN", expr("github.token"))
		resolve := mapping{}
		resolve.add("name", "record the resolution of "+name)
		resolveCond := pausedGuard + " && " + isCommand + " && contains(fromJSON('" + c.rolesJSON() + "'), github.event.comment.author_association)"
		resolve.add("if", expr(resolveCond))
		resolve.add("runs-on", runsOn(c.box.runsOn))
		resolve.add("timeout-minutes", 10)
		resolve.add("permissions", mapping{{key: "issues", value: plain(Write)}})
		resolve.add("concurrency", concurrency(name, "github.event.issue.number", resolveCond))
		resolve.add("env", renv)
		resolve.add("steps", seq{mapping{{key: "name", value: "Record the resolution"}, {key: "run", value: literal(resolveScript)}}})
		jobs = append(jobs, kv{key: "resolve", value: resolve})
	}
	wf.add("jobs", jobs)

	c.actors = append(c.actors, actorManifest{
		Name: name, Kind: "human", Workflow: WorkflowPath(name), Behavior: behaviorPath(a),
		Capabilities: capabilityStrings(a), Permissions: perms, Triggers: triggerManifest(a), Params: params,
		Timeout: a.Timeout.Value,
	})
	return wf
}

func orEmpty(e string) string {
	if e == "" {
		return "''"
	}
	return e
}
