package ir

// This file is the standard's four catalogs as data. Validation, `autonomy catalog`, the JSON Schema
// and (later) every substrate's support declaration read these tables, so a new entry is added here
// once and reaches all of them.

// Entry is one catalog entry: its name as written in a profile and what it means.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// CapabilityEntry is an entry of the capability catalog.
type CapabilityEntry struct {
	Entry
	// Noun is what the capability acts on: code, tasks or agent.
	Noun string `json:"noun"`
	// Grantable is false for gate-only capabilities no actor may hold (code:merge).
	Grantable bool `json:"grantable"`
}

// Capabilities is the capability catalog: an actor's authority, over three nouns.
var Capabilities = []CapabilityEntry{
	{Entry{"code:propose", "propose a change: write a feature branch, open a pull request, queue auto-merge, dispatch CI"}, "code", true},
	{Entry{"code:review", "bless a change for merge: post the verdict status that gates landing"}, "code", true},
	{Entry{"code:merge", "land a reviewed change on the default branch; gate-only, never granted (landing is native auto-merge)"}, "code", false},
	{Entry{"tasks:author", "create, update, label and set the state of work items"}, "tasks", true},
	{Entry{"tasks:converse", "post comments and verdicts on work items and changes"}, "tasks", true},
	{Entry{"agent:launch", "start another actor through the runner (scope: the one actor it may launch)"}, "agent", true},
	{Entry{"agent:list", "observe running actors"}, "agent", true},
	{Entry{"agent:update", "pause, resume or retry another actor's session"}, "agent", true},
	{Entry{"agent:cancel", "stop another actor's session"}, "agent", true},
}

// Sources is the trigger-param source catalog: what a trigger may forward to the actor it fires.
var Sources = []Entry{
	{"subject.ref", "id of the work item that fired the trigger (issue or pull request number, work-store id)"},
	{"subject.actor", "who initiated it"},
	{"subject.actorRole", "the initiator's authority over the project (OWNER, MEMBER, COLLABORATOR, ...); empty if not applicable"},
	{"subject.text", "the text that fired it (comment or body); empty if not applicable"},
	{"trigger.kind", "why it fired (the event action or name, cron, dispatch)"},
}

// States is the task lifecycle catalog: the states the orchestrator reads off a work item.
var States = []Entry{
	{"open", "created, not yet triaged"},
	{"ready", "triaged, ready for an actor to work"},
	{"working", "an actor is acting on it"},
	{"in-review", "a change is proposed, awaiting review"},
	{"input-required", "blocked awaiting input from a named party (the requester or a maintainer)"},
	{"blocked", "cannot proceed (policy, repeated failure, budget)"},
	{"done", "completed, with a verified result"},
	{"rejected", "terminal, not done (duplicate, spam, wontfix, failed)"},
}

// StateAliases maps spellings of lifecycle states found in real profiles to the standard's names.
var StateAliases = map[string]string{
	"review":        "in-review",
	"inReview":      "in-review",
	"inputRequired": "input-required",
}

// FieldEntry is an entry of the actor-field catalog.
type FieldEntry struct {
	Entry
	// Origin says where the field comes from: "slot" (one of the standard's actor slots),
	// "discriminator" (kind), "spec" (timeout, the standard's only non-capability field) or
	// "extension" (fields real profiles use beyond the standard).
	Origin string `json:"origin"`
}

// Fields is the actor-field catalog: every key an actor may carry.
var Fields = []FieldEntry{
	{Entry{"behavior", "what the actor does: a bare name NAME is the skill folder skills/NAME holding SKILL.md; a path is a skill folder or a script (run by its #! line or extension); for a human, the task spec the person is handed"}, "slot"},
	{Entry{"kind", "agent (default, a machine participant) or human (a person, engaged on demand)"}, "discriminator"},
	{Entry{"capabilities", "the actor's authority, from the capability catalog, each optionally @scope"}, "slot"},
	{Entry{"triggers", "when it fires (cron, event or dispatch) and the params each forwards"}, "slot"},
	{Entry{"timeout", "minutes before the run is killed"}, "spec"},
	{Entry{"review", "the independent reviewer of this proposer: another actor holding code:review"}, "extension"},
	{Entry{"result", "the result contract: schema is a named contract, an inline JSON Schema, or none (exit status only, weaker); an agent that declares none delivers autonomy.result.v1"}, "extension"},
	{Entry{"execution", "workspace: shared (the trunk workspace) or isolated (its own branch workspace)"}, "extension"},
	{Entry{"prelaunch", "a command a local runner runs before launch"}, "extension"},
}

// CodeHosts are the values of codeHost; the first is the default.
var CodeHosts = []string{"local-git", "github"}

// Workspaces are the values of execution.workspace.
var Workspaces = []string{"shared", "isolated"}

// Kinds are the values of an actor's kind; the first is the default.
var Kinds = []string{"agent", "human"}

// Roles are the document roles of documents.roles; vision is required once roles are declared.
var Roles = []string{"vision", "constitution", "roadmap"}

// names returns the Name of every entry, in catalog order.
func names[T interface{ entryName() string }](entries []T) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.entryName()
	}
	return out
}

func (e Entry) entryName() string { return e.Name }

// The catalogs' names, computed once: validation looks them up for every actor.
var (
	capabilityNames = CapabilityNames()
	sourceNames     = SourceNames()
	stateNames      = StateNames()
	fieldNames      = FieldNames()
)

// CapabilityNames lists the capability catalog's names.
func CapabilityNames() []string { return names(Capabilities) }

// SourceNames lists the trigger-param source catalog's names.
func SourceNames() []string { return names(Sources) }

// StateNames lists the task lifecycle catalog's names.
func StateNames() []string { return names(States) }

// FieldNames lists the actor-field catalog's names.
func FieldNames() []string { return names(Fields) }

// LookupCapability returns the catalog entry of a capability name (without scope).
func LookupCapability(name string) (CapabilityEntry, bool) {
	for _, c := range Capabilities {
		if c.Name == name {
			return c, true
		}
	}
	return CapabilityEntry{}, false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
