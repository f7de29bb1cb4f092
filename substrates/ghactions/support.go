package ghactions

import "github.com/autonomyhq/autonomy/substrates"

// support is what gh-actions realizes of the standard, feature by feature. Compile warns for
// every feature a profile uses that is not fully supported; conformance checks the rest.
var support = []substrates.Support{
	{Feature: "capability:code:propose", Level: substrates.Supported, Note: "a trusted propose job that runs no model holds contents, pull-requests, actions and issues: write and opens the pull request; the model's job holds none of them"},
	{Feature: "capability:code:review", Level: substrates.Supported, Note: "a trusted review job that runs no model holds statuses and pull-requests: write and posts agent-review on the head the verdict names"},
	{Feature: "capability:code:merge", Level: substrates.Unsupported, Note: "gate-only: no job is ever granted it (the validator refuses it); landing is native auto-merge after the required reviews"},
	{Feature: "capability:tasks:author", Level: substrates.Supported, Note: "the create_item and set_state tools, applied by the trusted apply job (issues: write); the model's job reads"},
	{Feature: "capability:tasks:converse", Level: substrates.Supported, Note: "the comment tool, applied by the trusted apply job (issues: write); the model's job reads"},
	{Feature: "capability:agent:launch", Level: substrates.Supported, Note: "the launch tool, a workflow_dispatch by the trusted apply job (actions: write); the model's job reads"},
	{Feature: "capability:agent:list", Level: substrates.Supported, Note: "actions: read"},
	{Feature: "capability:agent:cancel", Level: substrates.Supported, Note: "the cancel_session tool, applied by the trusted apply job (actions: write)"},
	{Feature: "capability:agent:update", Level: substrates.Unsupported, Note: "GitHub cannot pause or resume a run; the job gets no permission for it"},
	{Feature: "capability:@scope", Level: substrates.Partial, Note: "code:propose@SCOPE is enforced by the propose job; tasks:*, agent:launch and agent:cancel scopes by the apply job, which checks every effect against the installed manifest; a scoped code:review or agent:list reaches the agent as env only"},
	{Feature: "trigger:cron", Level: substrates.Supported, Note: "on.schedule, in UTC, at most every 5 minutes"},
	{Feature: "trigger:dispatch", Level: substrates.Supported, Note: "on.workflow_dispatch, one input per forwarded param plus a correlation input"},
	{Feature: "trigger:event", Level: substrates.Supported, Note: "carried verbatim into on:, gated when outsiders can fire it"},
	{Feature: "source:subject.ref", Level: substrates.Supported, Note: "issue, pull request or discussion number, or the dispatch input"},
	{Feature: "source:subject.actor", Level: substrates.Supported, Note: "event.sender.login or github.actor; a session's launch (dispatched by github-actions[bot]): the launching actor, set by the apply job"},
	{Feature: "source:subject.actorRole", Level: substrates.Supported, Note: "the author_association of the comment, review or item; a dispatch: OWNER or COLLABORATOR by who dispatched, NONE for a bot's (a session's launch)"},
	{Feature: "source:subject.text", Level: substrates.Supported, Note: "the comment, review or item body"},
	{Feature: "source:trigger.kind", Level: substrates.Supported, Note: "event.action or event_name"},
	{Feature: "kind:human", Level: substrates.Supported, Note: "engaged on the work item; resolved by a trusted maintainer's command"},
	{Feature: "field:timeout", Level: substrates.Supported, Note: "job timeout-minutes"},
	{Feature: "field:review", Level: substrates.Supported, Note: "the reviewer gets a dispatch input for subject.ref, and the proposer's propose job dispatches it on the pull request it opens"},
	{Feature: "field:result", Level: substrates.Supported, Note: "an agent's result, a skill's or a script's (written to AUTONOMY_RESULT), is verified by the apply job against its contract (autonomy.result.v1 by default, or the declared one, read at the trusted commit), which fails the run without a valid one; a script's apply job holds contents: read only; a reviewer's verdict is validated by its review job"},
	{Feature: "field:execution", Level: substrates.Supported, Note: "every job has its own fresh checkout, so a workspace is always isolated"},
	{Feature: "field:prelaunch", Level: substrates.Unsupported, Note: "a job has no launcher to run a command before it; prelaunch is ignored"},
	{Feature: "policy:maxConcurrent", Level: substrates.Unsupported, Note: "GitHub cannot cap concurrent runs across workflows; each actor has one concurrency group per subject, and maxConcurrent is not enforced"},
}
