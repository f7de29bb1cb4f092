package local

import "github.com/autonomyhq/autonomy/substrates"

// codeNote is how the local runner realizes code:propose and code:review (codeflow.go).
const codeNote = "the runner's code flow: a proposer's commits are checked, reviewed by its reviewer and bound to their head; for codeHost local-git the runner merges an approval, for codeHost github it pushes autonomy/<actor>/<subject>, opens the pull request, posts agent-review on the head and arms auto-merge for that head, with the runner's token; no code-host token reaches a session"

// tasksNote is how the local runner realizes tasks:converse and tasks:author (hands.go, hands_github.go).
const tasksNote = "codeHost github: read_item and list_items are answered from GitHub, and the comment, create_item and set_state tools land there, applied by the session's supervisor with the runner's own GH_TOKEN, never the session's; codeHost local-git: comment is recorded with the session and the work-item tools are refused (no tracker)"

// eventNote is what fires an event trigger locally (events.go, code_events.go).
const eventNote = "codeHost github: runner serve polls issue_comment (created), issues and pull_request(_target) (opened, labeled, unlabeled, closed, reopened, assigned, unassigned; synchronize for a pull request) and pull_request_review (submitted) every policy.box.local.events.poll_seconds, gated and resolved as on GitHub, each event once; " +
	"codeHost local-git: the runner's code flow fires pull_request(_target) opened/synchronize and pull_request_review submitted; any other event or activity never fires locally"

// support is what local realizes of the standard, feature by feature. Compile warns for every
// feature a profile uses that is not fully supported; conformance checks the rest.
var support = []substrates.Support{
	{Feature: "capability:code:propose", Level: substrates.Supported, Note: codeNote},
	{Feature: "capability:code:review", Level: substrates.Supported, Note: codeNote},
	{Feature: "capability:code:merge", Level: substrates.Unsupported, Note: "gate-only: no session is ever granted it (the validator refuses it); the runner itself merges an approved proposal (the code flow, codeHost local-git), or GitHub does once the runner armed auto-merge for the approved head (codeHost github)"},
	{Feature: "capability:tasks:author", Level: substrates.Supported, Note: tasksNote},
	{Feature: "capability:tasks:converse", Level: substrates.Supported, Note: tasksNote},
	{Feature: "capability:agent:launch", Level: substrates.Supported, Note: "enforced: runner launch from inside a session needs it; agent:launch@x launches only x"},
	{Feature: "capability:agent:list", Level: substrates.Supported, Note: "enforced: runner list, get and logs from inside a session need it"},
	{Feature: "capability:agent:update", Level: substrates.Supported, Note: "enforced: runner update from inside a session needs it"},
	{Feature: "capability:agent:cancel", Level: substrates.Supported, Note: "enforced: runner cancel from inside a session needs it"},
	{Feature: "capability:@scope", Level: substrates.Partial, Note: "an agent:* scope names the only actor the verb may act on, and code:propose@SCOPE the only paths a proposal may change, both enforced (no warning for them); another code: or tasks: scope reaches the agent as AUTONOMY_CAPABILITIES only"},
	{Feature: "trigger:cron", Level: substrates.Supported, Note: "runner tick/serve, exact 5-field semantics in policy.box.local.timezone; a missed slot fires once"},
	{Feature: "trigger:dispatch", Level: substrates.Supported, Note: "runner launch ACTOR, params from --param, --ref, --from, --text, --kind"},
	{Feature: "trigger:event", Level: substrates.Partial, Note: eventNote},
	{Feature: "source:subject.ref", Level: substrates.Supported, Note: "runner launch --ref"},
	{Feature: "source:subject.actor", Level: substrates.Supported, Note: "runner launch --from; else the launching session's actor (a session cannot set it), or your user name"},
	{Feature: "source:subject.actorRole", Level: substrates.Supported, Note: "OWNER when you launch, NONE when a session does (a session cannot set it)"},
	{Feature: "source:subject.text", Level: substrates.Supported, Note: "runner launch --text"},
	{Feature: "source:trigger.kind", Level: substrates.Supported, Note: "runner launch --kind; else dispatch, or cron from the schedule"},
	{Feature: "kind:human", Level: substrates.Supported, Note: "a parked ask listed in .autonomy/state/attention.md, done only with its one-time token and evidence"},
	{Feature: "field:timeout", Level: substrates.Supported, Note: "TERM to the process group, KILL after policy.box.local.graceSeconds"},
	{Feature: "field:review", Level: substrates.Supported, Note: "the runner launches the reviewer on a proposer's branch when its session ends done with commits, binds the verdict to the head and merges only an approval of it, within the proposer's code:propose@scope; for codeHost github on the pull request it opened, posting agent-review on the head; the proposer also gets AUTONOMY_REVIEWER"},
	{Feature: "field:result", Level: substrates.Supported, Note: "an exit 0 is done only with a result that validates against the actor's contract (autonomy.result.v1 by default), delivered through submit_result or AUTONOMY_RESULT"},
	{Feature: "field:execution", Level: substrates.Supported, Note: "isolated: a git worktree per session under .autonomy/worktrees, removed when it ends"},
	{Feature: "field:prelaunch", Level: substrates.Supported, Note: "run with sh -c in the session's workspace before the actor; a failure fails the session"},
	{Feature: "policy:maxConcurrent", Level: substrates.Supported, Note: "running agent sessions never exceed it: launch refuses, tick defers"},
}
