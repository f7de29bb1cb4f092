package agent

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Choice is what policy.box.<substrate>.agent chose: a preset, or an explicit argv.
type Choice struct {
	// Preset is the chosen preset; zero when Argv is set.
	Preset Preset
	// Argv is an explicit command, one word per item (the skill on stdin), nil for a preset.
	Argv []string
}

// Custom reports whether the box gave its own command.
func (c Choice) Custom() bool { return c.Argv != nil }

// Problem is one thing wrong (or worth a warning) in the agent key, at its node.
type Problem struct {
	Node    *yaml.Node
	Warning bool
	Message string
	Hint    string
}

// Tested is the version of the preset the project was tested with (make agent-smoke).
func (p Preset) Tested() string { return presets[p.Name].Version }

var versionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`) })

// example is the hint shown for a malformed agent key.
const example = "e.g. agent: claude, agent: { preset: codex, version: 0.169.0 }, or agent: [my-agent, --flag] (one word per item; the skill arrives on stdin)"

// Parse reads the value of policy.box.<substrate>.agent: a preset name, a mapping
// { preset: NAME, version: X.Y.Z }, or an explicit list of words. A nil node is the default
// preset. Pinning a version other than the tested one is a warning.
func Parse(v *yaml.Node) (Choice, []Problem) {
	def, _ := Lookup(Default)
	if v == nil {
		return Choice{Preset: def}, nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" || v.Value == "" {
			return Choice{Preset: def}, []Problem{{Node: v, Message: "agent is empty", Hint: example}}
		}
		p, ok := Lookup(v.Value)
		if !ok {
			return Choice{Preset: def}, []Problem{unknown(v)}
		}
		return Choice{Preset: p}, nil
	case yaml.SequenceNode:
		argv := make([]string, 0, len(v.Content))
		for _, c := range v.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" || c.Value == "" {
				return Choice{Preset: def}, []Problem{{Node: c, Message: "agent item must be a non-empty string", Hint: example}}
			}
			if Placeholder(c.Value) {
				return Choice{Preset: def}, []Problem{{Node: c, Message: fmt.Sprintf("agent item %s is a placeholder only presets use", c.Value), Hint: "an explicit command reads AUTONOMY_RESULT and AUTONOMY_RESULT_SCHEMA from its env"}}
			}
			argv = append(argv, c.Value)
		}
		if len(argv) == 0 {
			return Choice{Preset: def}, []Problem{{Node: v, Message: "agent is empty", Hint: "name a preset (" + strings.Join(Names(), ", ") + ") or a command, or remove agent for the default"}}
		}
		return Choice{Argv: argv}, nil
	case yaml.MappingNode:
		var p Preset
		var probs []Problem
		var version *yaml.Node
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			switch k.Value {
			case "preset":
				var ok bool
				if p, ok = Lookup(val.Value); !ok || val.Kind != yaml.ScalarNode {
					probs = append(probs, unknown(val))
				}
			case "version":
				version = val
			default:
				probs = append(probs, Problem{Node: k, Message: fmt.Sprintf("agent: unknown key %q", k.Value), Hint: "agent: { preset: NAME, version: X.Y.Z }"})
			}
		}
		if p.Name == "" {
			if len(probs) == 0 {
				probs = append(probs, Problem{Node: v, Message: "agent has no preset", Hint: "agent: { preset: " + Default + " }"})
			}
			return Choice{Preset: def}, probs
		}
		if version != nil {
			switch {
			case version.Kind != yaml.ScalarNode || !versionRe().MatchString(version.Value):
				probs = append(probs, Problem{Node: version, Message: fmt.Sprintf("agent.version %q is not an exact version", version.Value), Hint: "pin an exact npm version, e.g. version: " + p.Version})
			case version.Value != p.Version:
				probs = append(probs, Problem{Node: version, Warning: true,
					Message: fmt.Sprintf("agent: %s is pinned to %s, not %s, the version autonomy was tested with (make agent-smoke)", p.Package, version.Value, p.Tested()),
					Hint:    "remove version to run the tested one, or run make agent-smoke against this one"})
				p.Version = version.Value
			}
		}
		return Choice{Preset: p}, probs
	}
	return Choice{Preset: def}, []Problem{{Node: v, Message: "agent must be a preset name, a mapping or a list of words", Hint: example}}
}

func unknown(n *yaml.Node) Problem {
	return Problem{Node: n, Message: fmt.Sprintf("agent: unknown preset %q", n.Value),
		Hint: "one of: " + strings.Join(Names(), ", ") + ", or a list of words for your own command"}
}
