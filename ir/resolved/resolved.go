// Package resolved is a validated profile with every behavior classified once: what each actor's
// behavior is (a skill, a script, or one of the playbook formats), what the playbooks in it hold
// that a substrate compiles (a workflow playbook's steps, a step playbook's first elicitation, a
// capsule's verification method), the overlay package woven into the skills, and the MCP servers
// the workflow playbooks may call.
//
// Why a package of its own, under ir: arrows point downward (cmd → conformance → substrates/* →
// playbook → ir), so a substrate may not climb back up into playbook to learn what a behavior is,
// and recomputing that per actor made compile quadratic in actors. Package playbook fills this
// model (playbook.Resolve) once per profile, above the substrates: the callers that compile (the
// CLI's validate, compile and check, conformance, the golden test) resolve the profile, report
// its diagnostics and hand the same *Profile to every substrate's Compile. The model is plain
// data that both sides import; the little logic here works on that data alone (matching an
// overlay's runtime targets, writing the weave config), so no substrate imports playbook/….
package resolved

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// Kind is what an actor's behavior is.
type Kind string

// The kinds of behavior. A capsule playbook is handed to the agent as a skill (Capsule is a
// skill too: ir.Actor.Skill says so); workflow and step playbooks are run by the runtime.
const (
	// None is a behavior nothing was resolved for: a person, or an actor without a behavior.
	None     Kind = ""
	Skill    Kind = "skill"
	Script   Kind = "script"
	Capsule  Kind = "capsule"
	Steps    Kind = "steps"
	Workflow Kind = "workflow"
)

// WeaveFile is the file, in an installation's data folder, that tells the runtime where the
// overlay package is and what persona it protects (playbook.WeaveConfig is its content).
const WeaveFile = "weave.json"

// Profile is a validated profile and what its behaviors resolved to.
type Profile struct {
	*ir.Profile
	// Behaviors maps every actor's behavior file (ir.Actor.BehaviorFile) to what it is; actors
	// sharing a behavior share the entry.
	Behaviors map[string]*Behavior
	// Overlays is the profile's overlay package; nil when it has none, or one without overlays.
	Overlays *Overlays
	// OverlayFolder is the folder policy.box.overlays names, and the position of its value, when
	// the key is set and valid: an install puts the package there, which must stay off the paths
	// autonomy owns. "" when the key is absent (the default folder owns no such path) or refused.
	OverlayFolder    string
	OverlayFolderPos ir.Pos
	// Woven are the skill actors an overlay of the package targets by role, operator or skill
	// name (Weaves adds the runtime targets).
	Woven map[string]bool
	// MCP is policy.box.mcp.servers, as a workflow playbook's mcp steps read it; nil when none.
	MCP map[string]MCPServer
}

// Of wraps a profile whose behaviors are all skills or scripts (as ir classified them), with no
// overlay package and no playbook: what a caller without playbooks (a test of a substrate's own
// features) compiles. A profile holding playbooks must be resolved by playbook.Resolve.
func Of(p *ir.Profile) *Profile {
	r := &Profile{Profile: p, Behaviors: make(map[string]*Behavior), MCP: ServersOf(p.Policy)}
	for _, a := range p.Actors {
		if a.BehaviorFile == "" || a.IsHuman() || r.Behaviors[a.BehaviorFile] != nil {
			continue
		}
		k := Script
		if a.Skill {
			k = Skill
		}
		r.Behaviors[a.BehaviorFile] = &Behavior{Kind: k}
	}
	return r
}

// Behavior is what one behavior file is.
type Behavior struct {
	Kind Kind
	// Verification is a capsule playbook's ## Verification method; "" for any other behavior.
	// For a superseded capsule it is its successor's, the playbook a new run follows.
	Verification string
	// Lifecycle is set for a capsule playbook no new run may follow as written: archived (no new
	// run starts) or superseded (a new run follows its successor).
	Lifecycle *Lifecycle
	// Workflow is the parsed workflow playbook when Kind is Workflow and it has no errors.
	Workflow *WorkflowPlaybook
	// Elicit is, for a step playbook without errors, the position (in its file) of its first
	// @elicit, sub-steps included; nil when it asks no one.
	Elicit *ir.Pos
	// File is the behavior's path (the profile directory joined), for diagnostics in it.
	File string
	// Diagnostics are the problems of a workflow or step playbook itself, each positioned in
	// File; a substrate that compiles the playbook reports its errors as its own.
	Diagnostics ir.Diagnostics
}

// Lifecycle is where a capsule playbook is in draft → active → superseded → archived, when that
// changes what a new run does (seed 000: "superseded: in-flight runs continue; new runs use
// successor"; "archived: no new runs").
type Lifecycle struct {
	// Status is "archived" or "superseded".
	Status string `json:"status"`
	// At is the playbook's status: line, "FILE:LINE:COL" (the profile directory joined).
	At string `json:"at"`
	// Successor is, for a superseded playbook, the playbook a new run follows (relative to the
	// profile directory, slash-separated): the end of its superseded_by: chain. Chain says the
	// chain, "a.playbook.md → b.playbook.md". Reason says why no run starts when Status is
	// "archived" (the playbook itself, or the end of its chain, is archived).
	Successor string `json:"successor,omitempty"`
	Chain     string `json:"chain,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// StepPlaybook reports whether the behavior is a step playbook a substrate can run: one without
// errors.
func (b *Behavior) StepPlaybook() bool { return b.Kind == Steps && !b.Diagnostics.HasErrors() }

// Behavior is what the actor's behavior resolved to; a behavior of Kind None for a person or an
// actor whose behavior was not resolved.
func (r *Profile) Behavior(a *ir.Actor) *Behavior {
	if a.IsHuman() {
		return &Behavior{}
	}
	if b := r.Behaviors[a.BehaviorFile]; b != nil {
		return b
	}
	return &Behavior{}
}

// Weaves reports whether any overlay of the package targets the actor, a skill, on the substrate
// (by role, operator, its skill's declared name or the runtime, globs included), whatever the
// overlay's status: which are woven is decided at run time.
func (r *Profile) Weaves(a *ir.Actor, substrate string) bool {
	if !a.Skill || r.Overlays == nil {
		return false
	}
	if r.Woven[a.Name.Value] {
		return true
	}
	runtime := "runtime/" + substrate
	for _, pattern := range r.Overlays.Runtimes {
		if ok, err := path.Match(pattern, runtime); err == nil && ok {
			return true
		}
	}
	return false
}

// Overlays is the profile's overlay package, as an install copies it.
type Overlays struct {
	// Dir is the package's folder relative to the profile directory, slash-separated.
	Dir string
	// Index is the package's _index.md as `playbook index` writes it (IndexFile).
	Index     []byte
	IndexFile string
	// Runtimes are the patterns of the overlays' runtime/… targets ("runtime/gh-actions",
	// "runtime/*"), matched against "runtime/"+substrate.
	Runtimes []string
	// Persona is the profile's persona as the weave config holds it: a JSON object.
	Persona []byte
}

// WeaveConfig is the content of WeaveFile for a package installed at pkg (a folder relative to
// the installation root): the package and the persona, as playbook.WeaveConfig marshals them.
func (o *Overlays) WeaveConfig(pkg string) ([]byte, error) {
	name, err := json.Marshal(pkg)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"package":`)
	b.Write(name)
	persona := bytes.TrimSpace(o.Persona)
	if len(persona) >= 2 && persona[0] == '{' && persona[len(persona)-1] == '}' {
		persona = persona[1 : len(persona)-1]
	}
	if inner := strings.TrimSpace(string(persona)); inner != "" {
		b.WriteByte(',')
		b.WriteString(inner)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Contract is the result contract an actor's sessions deliver (ir.Actor.Contract): the declared
// one, or autonomy.result.v1 for a skill or capsule the box's agent runs. A workflow or step
// playbook declaring none settles by its own envelope, which the runtime checks.
func (r *Profile) Contract(a *ir.Actor) *ir.Result {
	if k := r.Behavior(a).Kind; a.Result == nil && (k == Steps || k == Workflow) {
		return nil
	}
	return a.Contract()
}
