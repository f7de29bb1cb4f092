package ir

import (
	"gopkg.in/yaml.v3"
	"path"

	"github.com/autonomyhq/autonomy/ir/cron"
)

// Schema is the only schema identifier this package reads.
const Schema = "autonomy.ir.v1"

// String is a scalar string value and where it was written. A zero Pos means the key was absent.
type String struct {
	Value string
	Pos   Pos
}

// Int is an integer value and where it was written. A zero Pos means the key was absent.
type Int struct {
	Value int
	Pos   Pos
}

// Profile is a loaded autonomy.ir.v1 profile.
type Profile struct {
	// File is the profile file as the user named it (dir/ir.yml for a directory); Dir is the profile
	// directory every relative path in the profile resolves against.
	File string
	Dir  string

	Schema String
	// TargetsPos is where targets was written (zero when absent).
	TargetsPos Pos
	Targets    []String
	CodeHost   String
	// ActorsKey is the key the actor map was written under: "actors" (the standard's) or "agents".
	ActorsKey String
	// Actors are in the order the profile declares them.
	Actors    []*Actor
	Policy    Policy
	Resources []String
	// ResourceFiles are the valid resources as Validate resolved them, in declaration order.
	ResourceFiles []ResourceFile
	Documents     *Documents

	// typos holds the keys that misspelled keys were probably meant to be (reported already).
	typos map[string]bool
}

// Actor is one participant of the fleet: an AI agent or a human.
type Actor struct {
	Name            String
	Kind            String
	Behavior        String
	Capabilities    []Capability
	CapabilitiesPos Pos
	Triggers        []*Trigger
	TriggersPos     Pos
	Timeout         Int
	Review          String
	Result          *Result
	Execution       *Execution
	Prelaunch       String

	// hollow marks an actor written with no fields or as a non-mapping, already reported: the
	// validator does not list every missing field of it again.
	hollow bool
	// typos holds the fields that misspelled keys were probably meant to be (reported already).
	typos map[string]bool

	// Skill is set by Validate: true when Behavior resolved to a skill folder (its SKILL.md), false
	// for a script. BehaviorFile is the resolved file, relative to the profile directory.
	Skill        bool
	BehaviorFile string
	// Script is set by Validate for an agent whose behavior is a script: how it runs.
	Script *ScriptRun
}

// IsHuman reports whether the actor is a person (kind: human).
func (a *Actor) IsHuman() bool { return a.Kind.Value == "human" }

// BehaviorSource is what an install copies for the actor's behavior, relative to the profile: a
// skill's whole folder (dir is true), or the one file (a script, a playbook, a person's brief).
func (a *Actor) BehaviorSource() (src string, dir bool) {
	if a.Skill && path.Base(a.BehaviorFile) == SkillFile {
		return path.Dir(a.BehaviorFile), true
	}
	return a.BehaviorFile, false
}

// Holds reports whether the actor holds the capability name, with any scope or none.
func (a *Actor) Holds(name string) bool {
	for _, c := range a.Capabilities {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Capability is one granted capability, optionally narrowed by a scope (name@scope).
type Capability struct {
	Name  string
	Scope string
	// Raw is the capability as written, with its position.
	Raw String
}

// TriggerKind is the form of a trigger.
type TriggerKind string

// The three trigger forms of the standard.
const (
	Cron     TriggerKind = "cron"
	Event    TriggerKind = "event"
	Dispatch TriggerKind = "dispatch"
)

// Trigger says when an actor fires and what it forwards.
type Trigger struct {
	Pos Pos
	// Kind is the trigger's form; empty when the trigger names none or several (an error).
	Kind TriggerKind
	Cron String
	// Schedule is the parsed Cron expression, set by Validate when it is valid.
	Schedule *cron.Schedule
	// cronAt is where the cron expression's text starts (after an opening quote), so an error can
	// point at the offending field; zero when offsets do not map onto columns (escapes, folding).
	cronAt Pos
	// typos holds the keys that misspelled keys were probably meant to be (reported already).
	typos map[string]bool
	Event String
	// Config is an event trigger's configuration, carried verbatim (nil when absent).
	Config   *yaml.Node
	Dispatch String
	Params   []Param
}

// Param forwards one trigger-param source to the actor under an opaque env name.
type Param struct {
	Name   String
	Source String
}

// Result is an actor's result contract: a named contract or an inline JSON Schema.
type Result struct {
	Pos Pos
	// Named is the contract name when schema is a string.
	Named String
	// Inline is the inline JSON Schema when schema is a mapping, as JSON-compatible values.
	Inline    any
	InlinePos Pos
	inline    *yaml.Node
}

// Execution is where an actor's session runs.
type Execution struct {
	Pos       Pos
	Workspace String
}

// Policy is the profile's governance.
type Policy struct {
	Pos           Pos
	MaxConcurrent Int
	// Box is policy.box carried verbatim (nil when absent); substrates read the keys they own.
	Box *yaml.Node
	// TaskStates maps lifecycle states to the tracker's names, from policy.box.taskStates.
	TaskStates []TaskState
	// MCP is policy.box.mcp.servers: the MCP servers workflow playbooks' mcp steps may call.
	MCP []MCPServer
	// CLI is policy.box.cli: the programs workflow playbooks' cli steps may run; nil when not set.
	CLI *CLIPolicy
	// Web is policy.box.web: the hosts workflow playbooks' web steps may fetch from; nil when not
	// set (no web step runs).
	Web *WebPolicy
}

// TaskState maps one lifecycle state to the tracker's name for it.
type TaskState struct {
	// Key is the state as written (possibly an alias); State is the standard's name.
	Key   String
	State string
	Label String
}

// ResourceFile is a resource resolved against the profile directory.
type ResourceFile struct {
	// Path is where the resource is installed, relative to the installation (as written,
	// cleaned); Source is the file or folder of the profile that holds it, relative to the
	// profile directory. They differ for a dotfile stored without its dot (.gitignore kept as
	// gitignore, since a package cannot ship a dotfile).
	Path   string
	Source string
	// Dir says the resource is a folder: every regular file below it is a resource.
	Dir bool
	Pos Pos
}

// Documents names the adopter's governing documents by role.
type Documents struct {
	Pos      Pos
	RolesPos Pos
	Roles    []Role
}

// Role is one document role and the repository path of its document.
type Role struct {
	Name String
	Path String
}

// Actor returns the actor named name, or nil.
func (p *Profile) Actor(name string) *Actor {
	for _, a := range p.Actors {
		if a.Name.Value == name {
			return a
		}
	}
	return nil
}

// ActorNames lists the actors' names in declaration order.
func (p *Profile) ActorNames() []string {
	out := make([]string, len(p.Actors))
	for i, a := range p.Actors {
		out[i] = a.Name.Value
	}
	return out
}
