package substrates

import (
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// Caller is an actor calling the runner from inside one of its sessions, with the capabilities
// its installed profile gives it. Both substrates decide what it may do here, so agent:launch,
// agent:list, agent:update and agent:cancel (scoped or not) mean the same on each.
type Caller struct {
	// Who names the caller in a refusal: "session 7-k3qa (actor \"pm\")", "actor \"pm\"".
	Who string
	// Caps are its capabilities as installed.
	Caps []ir.Capability
}

// ParseCapabilities reads capabilities as installed ("agent:launch@develop").
func ParseCapabilities(raw []string) []ir.Capability {
	out := make([]ir.Capability, 0, len(raw))
	for _, s := range raw {
		name, scope, _ := strings.Cut(s, "@")
		out = append(out, ir.Capability{Name: name, Scope: scope, Raw: ir.String{Value: s}})
	}
	return out
}

// Authorize returns "" when the caller may apply verb (launch, list, update, cancel) to actor
// ("" for any actor, as list asks), and otherwise the refusal: it needs agent:<verb>, unscoped or
// scoped to actor.
func (c *Caller) Authorize(verb, actor string) string {
	need := "agent:" + verb
	held := false
	for _, cp := range c.Caps {
		if cp.Name != need {
			continue
		}
		held = true
		if cp.Scope == "" || actor == "" || cp.Scope == actor {
			return ""
		}
	}
	if held {
		return fmt.Sprintf("%s may not %s %q: its %s is scoped to another actor (its capabilities: %s)", c.Who, verb, actor, need, c.capList())
	}
	what := verb + " sessions"
	if actor != "" {
		what = fmt.Sprintf("%s %q", verb, actor)
	}
	return fmt.Sprintf("%s may not %s: it holds no %s (its capabilities: %s)", c.Who, what, need, c.capList())
}

// ListScope is the only actor a scoped agent:list lets the caller see ("" for all).
func (c *Caller) ListScope() string {
	scope := ""
	for _, cp := range c.Caps {
		if cp.Name == "agent:list" {
			if cp.Scope == "" {
				return ""
			}
			if scope == "" {
				scope = cp.Scope
			}
		}
	}
	return scope
}

func (c *Caller) capList() string {
	if len(c.Caps) == 0 {
		return "none"
	}
	out := make([]string, len(c.Caps))
	for i, cp := range c.Caps {
		out[i] = cp.Raw.Value
	}
	return strings.Join(out, ", ")
}
