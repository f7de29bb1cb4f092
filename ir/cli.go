package ir

import (
	"regexp"
	"sync"

	"gopkg.in/yaml.v3"
)

// CLIPolicy is policy.box.cli: the programs the cli steps (and postconditions) of workflow
// playbooks may run. Allow, when given, lists the only ones; Deny lists ones never run, whatever
// Allow says. A program is matched by its name (a path's last element: /usr/bin/rm is rm).
type CLIPolicy struct {
	Pos         Pos
	Allow, Deny []String
}

var cliKeys = []string{"allow", "deny"}

// programRe is a program name as policy.box.cli lists it: no path, no space.
var programRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`) })

// IsProgramName reports whether s is a program name as policy.box.cli lists one.
func IsProgramName(s string) bool { return programRe().MatchString(s) }

const cliExample = "e.g. cli: { allow: [git, jq], deny: [rm, curl] }"

// boxCLI type-checks policy.box.cli: { allow: [NAME...], deny: [NAME...] }.
func (d decoder) boxCLI(p *Policy, v *yaml.Node) {
	if !d.mapping(v, "policy.box.cli", cliExample) {
		return
	}
	c := &CLIPolicy{Pos: pos(v)}
	d.fields(v, "policy.box.cli", cliKeys, func(key string, _, list *yaml.Node) {
		if isNull(list) {
			return
		}
		what := "policy.box.cli." + key
		empty := ""
		if key == "allow" {
			empty = "list the programs cli steps may run, or remove allow (then any program but the denied ones runs)"
		}
		names := d.strList(list, what, cliExample, empty)
		for _, n := range names {
			if !programRe().MatchString(n.Value) {
				d.r.errorf(n.Pos, "write the program's name, e.g. git: a path's last element is what is matched", "%s: %q is not a program name", what, n.Value)
			}
		}
		if key == "allow" {
			c.Allow = names
		} else {
			c.Deny = names
		}
	})
	p.CLI = c
}

// WebPolicy is policy.box.web: the hosts the web steps of workflow playbooks may fetch from
// (a name, or *.domain for its subdomains). Without it no web step runs.
type WebPolicy struct {
	Pos   Pos
	Allow []String
}

// hostRe is a host as policy.box.web.allow lists it: a name, or *. and a domain.
var hostRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)
})

// IsHostPattern reports whether s is a host as policy.box.web.allow lists one.
func IsHostPattern(s string) bool { return hostRe().MatchString(s) }

const webExample = "e.g. web: { allow: [docs.example.com, \"*.wikipedia.org\"] }"

// boxWeb type-checks policy.box.web: { allow: [HOST...] }.
func (d decoder) boxWeb(p *Policy, v *yaml.Node) {
	if !d.mapping(v, "policy.box.web", webExample) {
		return
	}
	w := &WebPolicy{Pos: pos(v)}
	d.fields(v, "policy.box.web", []string{"allow"}, func(_ string, _, list *yaml.Node) {
		if isNull(list) {
			return
		}
		w.Allow = d.strList(list, "policy.box.web.allow", webExample, "list the hosts web steps may fetch from, or remove web (then no web step runs)")
		for _, h := range w.Allow {
			if !hostRe().MatchString(h.Value) {
				d.r.errorf(h.Pos, "write a host name, e.g. docs.example.com, or *.example.com for its subdomains; no scheme, port or path", "policy.box.web.allow: %q is not a host", h.Value)
			}
		}
	})
	p.Web = w
}
