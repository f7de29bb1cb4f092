package local

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The event source's settings (policy.box.local.events, documented in docs/local.md).
const (
	defaultPollSeconds = 60
	minPollSeconds     = 10
	maxPollSeconds     = 3600
	// defaultSLAMinutes is how long an ask waits before it is escalated when
	// policy.box.human.sla_minutes is unset, as on GitHub.
	defaultSLAMinutes = 60
)

var eventsKeys = []string{"poll_seconds", "repo", "trustedRoles"}

// EventsConfig is how the runner fires its actors' event triggers (policy.box.local.events):
// for codeHost github, serve polls the repository; for local-git, the runner's own code flow
// fires them (FireCodeEvent).
type EventsConfig struct {
	// CodeHost is the profile's codeHost: github or local-git.
	CodeHost string `json:"codeHost"`
	// PollSeconds is how often serve polls GitHub.
	PollSeconds int `json:"pollSeconds"`
	// Repo is the repository polled, owner/name ("": GITHUB_REPOSITORY, else the origin remote).
	Repo string `json:"repo,omitempty"`
	// TrustedRoles are the author associations whose comments, issues and pull requests fire
	// an actor, as policy.box.gh-actions.trustedRoles is on GitHub.
	TrustedRoles []string `json:"trustedRoles"`
}

// AsksConfig is how the runner escalates the asks to people left open.
type AsksConfig struct {
	// SLAMinutes is policy.box.human.sla_minutes (60 when unset): an ask unresolved that long
	// after its last notice is escalated.
	SLAMinutes int `json:"slaMinutes"`
	// Maintainers are whom escalations rotate through (policy.box.local.maintainers); empty
	// for the operator.
	Maintainers []string `json:"maintainers,omitempty"`
}

// repoName is owner/name as GitHub allows them.
var repoName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
})

// personName is a maintainer's name: a GitHub login or a local user name.
var personName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// readEvents reads policy.box.local.events onto ev.
func readEvents(r *substrates.BoxReader, v *yaml.Node, ev *EventsConfig) {
	if v.Kind != yaml.MappingNode {
		r.Errorf(v, "e.g. events: { poll_seconds: 60 }", "events must be a mapping")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			continue
		}
		switch k.Value {
		case "poll_seconds":
			if n, ok := r.Int(val, "events.poll_seconds", "e.g. poll_seconds: 60", minPollSeconds, maxPollSeconds); ok {
				ev.PollSeconds = n
			}
		case "repo":
			if s, ok := r.Str(val, "events.repo", "e.g. repo: octo-org/app"); ok {
				if !repoName().MatchString(s) {
					r.Errorf(val, "write the repository as owner/name, e.g. octo-org/app", "events.repo %q is not owner/name", s)
					continue
				}
				ev.Repo = s
			}
		case "trustedRoles":
			ev.TrustedRoles = readRoles(r, val)
		default:
			r.Errorf(k, nearestHint(k.Value, eventsKeys), "events: unknown key %q", k.Value)
		}
	}
}

// readRoles reads events.trustedRoles: some of the default trusted associations, never wider.
func readRoles(r *substrates.BoxReader, v *yaml.Node) []string {
	roles := r.Argv(v, "events.trustedRoles", "e.g. trustedRoles: [OWNER, MEMBER]")
	for i, role := range roles {
		if !slices.Contains(ghevent.TrustedRoles, role) {
			hint := "list some of " + strings.Join(ghevent.TrustedRoles, ", ")
			if slices.Contains(ghevent.AllRoles, role) {
				hint = role + " includes people outside the repository's collaborators; trustedRoles may only narrow " + strings.Join(ghevent.TrustedRoles, ", ")
			}
			r.Errorf(v.Content[i], hint, "events.trustedRoles: %q is not a trusted role", role)
			return nil
		}
	}
	if v.Kind == yaml.SequenceNode && len(roles) == 0 {
		r.Errorf(v, "list at least OWNER, or remove trustedRoles for the default", "events.trustedRoles is empty: no one could fire the gated events")
	}
	return roles
}

// readMaintainers reads policy.box.local.maintainers.
func readMaintainers(r *substrates.BoxReader, v *yaml.Node) []string {
	var out []string
	for i, name := range r.Argv(v, "maintainers", "e.g. maintainers: [alice, bob]") {
		if !personName().MatchString(name) {
			r.Errorf(v.Content[i], "a login or user name: letters, digits, '.', '_' and '-'", "maintainers: %q is not a name", name)
			continue
		}
		out = append(out, name)
	}
	return out
}

// nearestHint suggests the nearest of known, or lists them.
func nearestHint(k string, known []string) string {
	if ir.Nearest(k, known) != "" {
		return ir.Suggest(k, known)
	}
	return "valid keys: " + strings.Join(known, ", ")
}

// eventsConfig is the runner's EventsConfig for p: nil when no actor declares an event trigger.
func eventsConfig(p *ir.Profile, b box) *EventsConfig {
	for _, a := range p.Actors {
		for _, t := range a.Triggers {
			if t.Kind == ir.Event {
				ev := b.events
				ev.CodeHost = p.CodeHost.Value
				if ev.CodeHost == "" {
					ev.CodeHost = ir.CodeHosts[0]
				}
				if ev.PollSeconds == 0 {
					ev.PollSeconds = defaultPollSeconds
				}
				if len(ev.TrustedRoles) == 0 {
					ev.TrustedRoles = ghevent.TrustedRoles
				}
				return &ev
			}
		}
	}
	return nil
}

// asksConfig is the runner's AsksConfig for p: nil when it has no person to ask.
func asksConfig(p *ir.Profile, b box) *AsksConfig {
	if !slices.ContainsFunc(p.Actors, func(a *ir.Actor) bool { return a.IsHuman() }) {
		return nil
	}
	sla := defaultSLAMinutes
	if n := slaNode(p); n != nil {
		var v int
		if n.Decode(&v) == nil && v > 0 {
			sla = v
		}
	}
	return &AsksConfig{SLAMinutes: sla, Maintainers: b.maintainers}
}

// slaNode is policy.box.human.sla_minutes (validated by ir), or nil.
func slaNode(p *ir.Profile) *yaml.Node {
	n := substrates.BoxNode(p, "human")
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "sla_minutes" {
			return n.Content[i+1]
		}
	}
	return nil
}

// eventTrigger is an installed event trigger's config: its activity types and, for
// issue_comment, whether plain comments fire it.
func eventTrigger(t *ir.Trigger) (types []string, plain bool) {
	if t.Config == nil || t.Config.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(t.Config.Content); i += 2 {
		k, v := t.Config.Content[i], t.Config.Content[i+1]
		switch k.Value {
		case "types":
			if v.Kind == yaml.ScalarNode {
				types = append(types, v.Value)
			}
			for _, it := range v.Content {
				types = append(types, it.Value)
			}
		case "plain_comments":
			plain = v.Value == "true"
		}
	}
	return types, plain
}
