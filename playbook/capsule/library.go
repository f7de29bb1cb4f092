package capsule

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

// ValidateLibrary runs the rules that span the playbooks validated together (a library): one
// active playbook per (trigger, scope) (rule 1), supersession pairs that resolve and point back
// (checks 12 and 13), composes_into ↔ calls consistency (check 21) and unique UIDs (inherited
// from the core capsule). A reference resolves to a playbook by uid, by path (relative to the
// referring file, or a suffix of the playbook's path) or by file name without .playbook.md.
func ValidateLibrary(pbs []*Playbook) ir.Diagnostics {
	var diags ir.Diagnostics
	lib := library(pbs)
	uids := map[string]*Playbook{}
	active := map[[2]string]*Playbook{}
	for _, p := range pbs {
		c := checker{r: &source.Reporter{File: p.File}, p: p}
		if u := p.UID.Value; u != "" {
			if first, dup := uids[u]; dup {
				c.r.Errorf(p.UID.Pos, "give each playbook its own uid", "core check (UID uniqueness): uid %q is also the uid of %s", u, first.File)
			} else {
				uids[u] = p
			}
		}
		if p.status() == "active" && p.Trigger.Value != "" && p.Scope.Value != "" {
			key := [2]string{p.Trigger.Value, p.Scope.Value}
			if first, dup := active[key]; dup {
				c.r.Errorf(p.Status.Pos, "supersede one by the other (rule 5), or give them different triggers",
					"rule 1 (one active playbook per (trigger:, scope:) pair): %s is also active for trigger %q, scope %q", first.File, key[0], key[1])
			} else {
				active[key] = p
			}
		}
		lib.supersession(c)
		lib.composition(c)
		diags = append(diags, c.r.Diags...)
	}
	return diags
}

type library []*Playbook

func (lib library) supersession(c checker) {
	p := c.p
	if ref := p.Supersedes; ref.Value != "" {
		switch q := lib.resolve(p, ref.Value); {
		case q == nil:
			c.fail(12, ref.Pos, "name the predecessor by uid, path or file name", "supersedes: %q resolves to no playbook", ref.Value)
		case lib.resolve(q, q.SupersededBy.Value) != p:
			c.fail(12, ref.Pos, fmt.Sprintf("set superseded_by: in %s to this playbook, in the same commit", q.File), "%s does not name this playbook in its superseded_by:", q.File)
		}
	}
	if ref := p.SupersededBy; ref.Value != "" {
		n := 12
		if p.Status.Value == "superseded" {
			n = 13
		}
		switch q := lib.resolve(p, ref.Value); {
		case q == nil:
			c.fail(n, ref.Pos, "name the successor by uid, path or file name", "superseded_by: %q resolves to no playbook", ref.Value)
		case lib.resolve(q, q.Supersedes.Value) != p:
			c.fail(12, ref.Pos, fmt.Sprintf("set supersedes: in %s to this playbook, in the same commit", q.File), "%s does not name this playbook in its supersedes:", q.File)
		}
	}
}

func (lib library) composition(c checker) {
	p := c.p
	for _, ci := range p.ComposesInto {
		q := lib.resolve(p, ci.Playbook.Value)
		if q == nil {
			c.fail(21, ci.Playbook.Pos, "name the orchestrator by uid, path or file name", "composes_into: %q resolves to no playbook", ci.Playbook.Value)
			continue
		}
		if !lib.calls(q, p) {
			c.fail(21, ci.Playbook.Pos, fmt.Sprintf("add this playbook to the calls: of %s", q.File), "%s does not list this playbook in its calls:", q.File)
		}
	}
	for _, call := range p.Calls {
		q := lib.resolve(p, call.Value)
		if q == nil {
			c.fail(21, call.Pos, "name the sub-playbook by uid, path or file name", "calls: %q resolves to no playbook", call.Value)
			continue
		}
		back := false
		for _, ci := range q.ComposesInto {
			back = back || lib.resolve(q, ci.Playbook.Value) == p
		}
		if !back {
			c.fail(21, call.Pos, fmt.Sprintf("add composes_into: [{playbook: %s, role: …}] to %s", slug(p.File), q.File), "%s does not name this playbook in its composes_into:", q.File)
		}
	}
}

// calls reports whether orchestrator o lists p in its calls:.
func (lib library) calls(o, p *Playbook) bool {
	for _, call := range o.Calls {
		if lib.resolve(o, call.Value) == p {
			return true
		}
	}
	return false
}

// resolve finds the playbook ref names, as seen from playbook from; nil when none.
func (lib library) resolve(from *Playbook, ref string) *Playbook {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil
	}
	for _, q := range lib {
		if q.UID.Value == ref {
			return q
		}
	}
	clean := path.Clean(filepath.ToSlash(ref))
	rel := path.Join(path.Dir(filepath.ToSlash(from.File)), clean)
	for _, q := range lib {
		f := path.Clean(filepath.ToSlash(q.File))
		if f == clean || f == rel || strings.HasSuffix(f, "/"+strings.TrimPrefix(clean, "./")) {
			return q
		}
	}
	for _, q := range lib {
		if slug(q.File) == slug(ref) {
			return q
		}
	}
	return nil
}

// slug is a playbook's file name without its directory and extension.
func slug(file string) string {
	base := path.Base(filepath.ToSlash(file))
	for _, ext := range []string{".playbook.md", ".pipeline.md", ".md"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

// Successor follows the superseded_by: chain from p through lib (the playbooks validated
// together) to the first playbook that is not superseded, and returns it with the chain walked
// (p first); nil when a link does not resolve or the chain loops.
func Successor(lib []*Playbook, p *Playbook) (*Playbook, []*Playbook) {
	chain := []*Playbook{p}
	for cur := p; cur.status() == "superseded"; {
		next := library(lib).resolve(cur, cur.SupersededBy.Value)
		if next == nil {
			return nil, chain
		}
		for _, seen := range chain {
			if seen == next {
				return nil, chain
			}
		}
		chain = append(chain, next)
		cur = next
	}
	return chain[len(chain)-1], chain
}

// LifecycleStatus is the playbook's status, the legacy alias published read as active.
func (p *Playbook) LifecycleStatus() string { return p.status() }
