package kubernetes

import "github.com/autonomyhq/autonomy/substrates"

// offCluster is how a code: or tasks: capability is realized: the cluster holds no code-host
// credential to narrow, so the capability only reaches the agent.
const offCluster = "no code-host or tracker credential is issued in the cluster; the capability reaches a script as AUTONOMY_CAPABILITIES only (it acts with whatever credential its image carries), and a skill's tools for it are refused in the pod, saying so"

// support is what the Kubernetes target realizes of the standard, feature by feature. Compile
// warns for every feature a profile uses that is not fully supported; conformance checks the rest.
var support = []substrates.Support{
	{Feature: "capability:code:propose", Level: substrates.Partial, Note: offCluster},
	{Feature: "capability:code:review", Level: substrates.Partial, Note: offCluster},
	{Feature: "capability:code:merge", Level: substrates.Unsupported, Note: "gate-only: no session is ever granted it (the validator refuses it)"},
	{Feature: "capability:tasks:author", Level: substrates.Partial, Note: offCluster},
	{Feature: "capability:tasks:converse", Level: substrates.Partial, Note: offCluster},
	{Feature: "capability:agent:launch", Level: substrates.Supported, Note: "the actor's ServiceAccount may get the PodTemplates it may launch and create Jobs; the fleet's ValidatingAdmissionPolicy admits only a Job of such an actor with its template's shape; a skill's launch tool goes through the runner with that ServiceAccount"},
	{Feature: "capability:agent:list", Level: substrates.Supported, Note: "the actor's ServiceAccount may get, list and watch Jobs and pods and read pod logs, every session's of the namespace even under agent:list@ACTOR (the runner filters by the scope; the API does not); in a fleet with a person, also read the ConfigMaps, where the asks are"},
	{Feature: "capability:agent:update", Level: substrates.Supported, Note: "the actor's ServiceAccount may patch Jobs (suspend and resume); the admission policy admits no other change"},
	{Feature: "capability:agent:cancel", Level: substrates.Supported, Note: "the actor's ServiceAccount may patch Jobs, and the admission policy admits only the cancel: the Job ended and kept, read as cancelled"},
	{Feature: "capability:@scope", Level: substrates.Partial, Note: "an agent:launch, agent:cancel or agent:update scope is enforced by the admission policy (launch, cancel and update only that actor's Jobs; launch reads only its PodTemplate); an agent:list scope is not enforced by the API: the runner shows only that actor's sessions, but the ServiceAccount may get, list and watch every Job and pod of the namespace and read every pod's log; a code: or tasks: scope reaches the agent as AUTONOMY_CAPABILITIES only"},
	{Feature: "trigger:cron", Level: substrates.Supported, Note: "a CronJob per cron trigger, in policy.box.kubernetes.timeZone, concurrencyPolicy Forbid"},
	{Feature: "trigger:dispatch", Level: substrates.Supported, Note: "runner launch --target kubernetes creates a Job from the actor's PodTemplate, params as env"},
	{Feature: "trigger:event", Level: substrates.Unsupported, Note: "the cluster runs no event source; fire an event's session with runner launch, or use the gh-actions or local target"},
	{Feature: "source:subject.ref", Level: substrates.Supported, Note: "runner launch --ref; empty in a session a CronJob fires"},
	{Feature: "source:subject.actor", Level: substrates.Partial, Note: "runner launch --from, else the operator's user name; from a session its actor (the runner and the admission policy refuse another); empty in a session a CronJob fires"},
	{Feature: "source:subject.actorRole", Level: substrates.Partial, Note: "OWNER for the operator's launch, NONE for a session's (the runner and the admission policy refuse another); empty in a session a CronJob fires"},
	{Feature: "source:subject.text", Level: substrates.Partial, Note: "runner launch --text; empty in a session a CronJob fires"},
	{Feature: "source:trigger.kind", Level: substrates.Supported, Note: "cron in a session a CronJob fires; else the runner's launch"},
	{Feature: "kind:human", Level: substrates.Partial, Note: "a person gets no pod: the fleet config lists them, and the runner keeps their asks in the cluster; a session whose agent:launch reaches them parks an ask from its pod, and only the token resolves it"},
	{Feature: "field:timeout", Level: substrates.Supported, Note: "the Job's activeDeadlineSeconds"},
	{Feature: "field:review", Level: substrates.Unsupported, Note: "the cluster runs no code flow that launches the reviewer on a proposal; launch the reviewer yourself"},
	{Feature: "field:result", Level: substrates.Supported, Note: "the contract (autonomy.result.v1 unless the actor declares another) is installed in the autonomy-install ConfigMap and named by AUTONOMY_RESULT_SCHEMA; an exit 0 is done only with a result in AUTONOMY_RESULT that validates against it: the session entry point checks it and the runner checks it again from the pod's termination message"},
	{Feature: "field:execution", Level: substrates.Supported, Note: "every session is its own pod with its own filesystem: always isolated"},
	{Feature: "field:prelaunch", Level: substrates.Unsupported, Note: "the session's pod runs no command before the actor; prelaunch is ignored"},
	{Feature: "policy:maxConcurrent", Level: substrates.Supported, Note: "the fleet config carries it; the runner refuses a launch past it, and the ResourceQuota autonomy-sessions refuses a pod past it plus the cron triggers and the model proxy (finished sessions do not count: a Job created past it runs nothing until a session ends)"},
}
