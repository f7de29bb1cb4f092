package ghactions

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// Access is a GITHUB_TOKEN access level.
type Access string

// The access levels a job's permissions block uses.
const (
	Read  Access = "read"
	Write Access = "write"
)

// Permissions is a job's permissions block: GITHUB_TOKEN scope → access.
type Permissions map[string]Access

// baseline is what every agent job may read: observing code and tasks is not a capability.
var baseline = Permissions{"contents": Read, "issues": Read, "pull-requests": Read}

// grants is the standard's github realization of each capability (the Capabilities section).
// code:merge is absent: it is never granted, and ir refuses it. agent:update is absent: GitHub's
// token has no permission for pausing or resuming a run, so it is a control-plane operation.
var grants = map[string]Permissions{
	"code:propose":   {"contents": Write, "pull-requests": Write, "actions": Write},
	"code:review":    {"statuses": Write},
	"tasks:author":   {"issues": Write},
	"tasks:converse": {"issues": Write},
	"agent:launch":   {"actions": Write},
	"agent:cancel":   {"actions": Write},
	"agent:list":     {"actions": Read},
}

// Grant returns the permissions the standard maps a capability to on GitHub (nil for none).
func Grant(capability string) Permissions { return grants[capability] }

// merge raises p to at least q, scope by scope.
func (p Permissions) merge(q Permissions) {
	for scope, access := range q {
		if p[scope] != Write {
			p[scope] = access
		}
	}
}

// Allows reports whether p grants at least access on scope.
func (p Permissions) Allows(scope string, access Access) bool {
	switch p[scope] {
	case Write:
		return true
	case Read:
		return access == Read
	}
	return false
}

// sortedScopes lists p's scopes in order, for deterministic output.
func (p Permissions) sortedScopes() []string {
	out := make([]string, 0, len(p))
	for s := range p {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// scopeOrder are GitHub's GITHUB_TOKEN scopes, sorted: what compiler.permissions tells
// permissions blocks apart by.
var scopeOrder = [...]string{"actions", "attestations", "checks", "contents", "deployments", "discussions", "id-token",
	"issues", "models", "packages", "pages", "pull-requests", "repository-projects", "security-events", "statuses"}

// permissions is p as a job's permissions: mapping, built once per compile for each distinct p
// and shared by the jobs that hold it (emitter.share); p.yaml() for a p with a scope
// scopeOrder does not list.
func (c *compiler) permissions(p Permissions) mapping {
	var key [len(scopeOrder)]Access
	n := 0
	for i, s := range scopeOrder {
		if a, ok := p[s]; ok {
			key[i] = a
			n++
		}
	}
	if n != len(p) {
		return p.yaml()
	}
	if m, ok := c.perms[key]; ok {
		return m
	}
	if c.perms == nil {
		c.perms = map[[len(scopeOrder)]Access]mapping{}
	}
	m := p.yaml()
	c.emit.share(m)
	c.perms[key] = m
	return m
}

func (p Permissions) yaml() mapping {
	m := make(mapping, 0, len(p))
	for _, s := range p.sortedScopes() {
		m = append(m, kv{key: s, value: plain(p[s])})
	}
	return m
}

// realized is what an actor's capabilities become on GitHub.
type realized struct {
	perms Permissions
	// unexpressed are the capabilities GitHub cannot express (scoped ones, agent:update); they
	// reach the agent as env and compile warns about each.
	unexpressed []ir.Capability
}

// realize computes an agent job's permissions from its capabilities and nothing else. A job
// that runs a model reads only: it gets the read half of each capability's grant (actions: read
// for agent:*, to list runs and resolve a cancel's scope), and the writes go to the apply job
// (safeoutputs.go). A script, which runs no model, keeps the grants themselves, unscoped.
func realize(a *ir.Actor) realized {
	r := realized{perms: Permissions{}, unexpressed: unexpressed(a)}
	r.perms.merge(baseline)
	for _, c := range a.Capabilities {
		g, ok := grants[c.Name]
		switch {
		case !ok || !modelHeld(c):
		case a.Skill:
			r.perms.merge(readOnly(g))
		case c.Scope == "":
			r.perms.merge(g)
		}
	}
	return r
}

// unexpressed lists the actor's capabilities GitHub's token cannot express. The scope of an
// effect the apply job realizes is enforced there (a skill's), so it is expressed; a skill's
// scoped agent:list gets actions: read like an unscoped one (a read).
func unexpressed(a *ir.Actor) []ir.Capability {
	var out []ir.Capability
	for _, c := range a.Capabilities {
		if a.Skill && (c.Name == "agent:list" || c.Name != "agent:update" && slices.Contains(applied, c.Name)) {
			continue
		}
		if _, ok := grants[c.Name]; (c.Scope != "" || !ok) && c.Name != "code:merge" && c.Name != "code:propose" {
			out = append(out, c)
		}
	}
	return out
}

// unexpressedWarning explains why a capability got no permission on GitHub.
func unexpressedWarning(a *ir.Actor, c ir.Capability) ir.Diagnostic {
	msg, hint := "", ""
	switch {
	case c.Scope != "":
		g := grants[c.Name]
		var ps []string
		for _, s := range g.sortedScopes() {
			ps = append(ps, s+": "+string(g[s]))
		}
		msg = fmt.Sprintf("actor %q: GitHub cannot narrow %s to %q, so the job gets no permission for %s; the scope reaches the agent as AUTONOMY_CAPABILITIES", a.Name.Value, strings.Join(ps, ", "), c.Scope, c.Raw.Value)
		hint = "grant " + c.Name + " unscoped to let it act on GitHub, or run this actor on the local target"
	default:
		msg = fmt.Sprintf("actor %q: %s has no GitHub token permission (pausing or resuming a run is a control-plane operation); the job gets none for it", a.Name.Value, c.Raw.Value)
		hint = "launch and cancel with agent:launch and agent:cancel, or use the local target for update"
	}
	return ir.Diagnostic{Pos: c.Raw.Pos, Severity: ir.Warning, Message: msg, Hint: hint}
}

// realize is realize for an agent job of this compile, with id-token: write where the job runs
// the model and its credential is minted by OIDC (never for a script, which runs no model).
// Actors of one role hold the same capabilities, so the result is computed once per capability
// set; the permissions it returns are shared and never modified.
func (c *compiler) realize(a *ir.Actor) realized {
	key := capabilityList(a)
	if !a.Skill {
		key = "script\x00" + key
	}
	if r, ok := c.realized[key]; ok {
		return realized{perms: r.perms, unexpressed: unexpressed(a)}
	}
	r := realize(a)
	if c.box.credential.oidc && a.Skill {
		r.perms["id-token"] = Write
	}
	if c.realized == nil {
		c.realized = map[string]realized{}
	}
	c.realized[key] = r
	return r
}
