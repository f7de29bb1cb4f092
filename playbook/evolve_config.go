package playbook

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/ir"
)

// EvolveKey is the policy.box key declaring how the profile's overlays evolve (AIP-12's evolve
// contract): the evaluation that measures a shadow overlay before `playbook promote` makes it
// active, and the optional LLM judge of the persona lock:
//
//	evolve:
//	  evaluation:
//	    metric: score          # score: the mean of a numeric result field; rate: the share of results whose field equals `equals`
//	    field: score           # the result field measured
//	    equals: approve        # rate only
//	    minSessions: 5         # per arm (default 5)
//	    minImprovement: 0.05   # candidate − baseline must reach it, and be above 0 (default 0)
//	  judge:
//	    enabled: false         # off by default
//	    agent: codex           # an agent preset
//	    model: gpt-5-codex     # the preset's default when absent
const EvolveKey = "evolve"

// The metrics an evaluation may declare.
const (
	MetricScore = "score"
	MetricRate  = "rate"
)

// DefaultMinSessions is the fewest sessions per arm an evaluation measures, unless it sets
// minSessions.
const DefaultMinSessions = 5

// Evaluation is the measurement the profile declares for promotions.
type Evaluation struct {
	Metric         string
	Field          string
	Equals         string
	MinSessions    int
	MinImprovement float64
	// Pos is where policy.box.evolve.evaluation is, for messages.
	Pos ir.Pos
}

// Describe says what the evaluation measures, in one line.
func (e *Evaluation) Describe() string {
	if e.Metric == MetricRate {
		return fmt.Sprintf("rate: the share of sessions whose result's %q is %q", e.Field, e.Equals)
	}
	return fmt.Sprintf("score: the mean of the sessions' result field %q", e.Field)
}

// JudgeConfig is the LLM judge of the persona lock: off unless Enabled.
type JudgeConfig struct {
	Enabled bool
	Agent   string
	Model   string
}

// Evolve is policy.box.evolve.
type Evolve struct {
	// Evaluation is nil when the profile declares none: no overlay can then be promoted.
	Evaluation *Evaluation
	Judge      JudgeConfig
}

// ReadEvolve reads policy.box.evolve, reporting every problem at its position in the profile.
func ReadEvolve(p *ir.Profile) (Evolve, ir.Diagnostics) {
	var out Evolve
	const ex = "e.g. evolve: { evaluation: { metric: score, field: score, minSessions: 5, minImprovement: 0.05 }, judge: { enabled: false } }"
	diags := boxSection(p, EvolveKey, ex, func(k, v *yaml.Node, bad badFunc) {
		switch k.Value {
		case "evaluation":
			out.Evaluation = readEvaluation(v, bad)
		case "judge":
			out.Judge = readJudge(v, bad)
		default:
			bad(k, ir.Suggest(k.Value, []string{"evaluation", "judge"}), ": unknown key %q", k.Value)
		}
	})
	return out, diags
}

// boxSection reads the mapping policy.box.KEY, calling each for its keys with the reporter of
// its problems (each at its position in the profile, prefixed policy.box.KEY); ex is the hint for
// a section that is not a mapping. Nothing is reported for an absent section.
func boxSection(p *ir.Profile, key, ex string, each func(k, v *yaml.Node, bad badFunc)) ir.Diagnostics {
	_, n := boxKey(p.Policy.Box, key)
	if n == nil {
		return nil
	}
	var diags ir.Diagnostics
	bad := func(at *yaml.Node, hint, format string, args ...any) {
		diags = append(diags, ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: at.Line, Col: at.Column}, Severity: ir.Error,
			Message: "policy.box." + key + fmt.Sprintf(format, args...), Hint: hint})
	}
	if n.Kind != yaml.MappingNode {
		bad(n, ex, " must be a mapping")
		return diags
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		each(n.Content[i], n.Content[i+1], bad)
	}
	return diags
}

type badFunc func(at *yaml.Node, hint, format string, args ...any)

const evaluationExample = "e.g. evaluation: { metric: score, field: score, minSessions: 5, minImprovement: 0.05 }"

func readEvaluation(n *yaml.Node, bad badFunc) *Evaluation {
	if n.Kind != yaml.MappingNode {
		bad(n, evaluationExample, ".evaluation must be a mapping")
		return nil
	}
	e := &Evaluation{MinSessions: DefaultMinSessions, Pos: ir.Pos{Line: n.Line, Col: n.Column}}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		ok = e.set(n.Content[i], n.Content[i+1], bad) && ok
	}
	if !ok || !e.complete(n, bad) {
		return nil
	}
	return e
}

// set reads one key of an evaluation; false when its value is refused.
func (e *Evaluation) set(k, v *yaml.Node, bad badFunc) bool {
	str := func(key string) (string, bool) {
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" {
			bad(v, evaluationExample, ".evaluation.%s must be a non-empty string", key)
			return "", false
		}
		return v.Value, true
	}
	ok := true
	switch k.Value {
	case "metric":
		if e.Metric, ok = str("metric"); ok && e.Metric != MetricScore && e.Metric != MetricRate {
			bad(v, ir.Suggest(e.Metric, []string{MetricScore, MetricRate}), ".evaluation.metric %q is unknown: score (the mean of a numeric result field) or rate (the share of results whose field equals `equals`)", e.Metric)
			return false
		}
	case "field":
		e.Field, ok = str("field")
	case "equals":
		e.Equals, ok = str("equals")
	case "minSessions":
		c, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil || c < 1 {
			bad(v, "a whole number ≥ 1", ".evaluation.minSessions must be a positive integer, not %q", v.Value)
			return false
		}
		e.MinSessions = c
	case "minImprovement":
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || err != nil || f < 0 || f != f {
			bad(v, "a number ≥ 0, e.g. 0.05", ".evaluation.minImprovement must be a number ≥ 0, not %q", v.Value)
			return false
		}
		e.MinImprovement = f
	default:
		bad(k, ir.Suggest(k.Value, []string{"metric", "field", "equals", "minSessions", "minImprovement"}), ".evaluation: unknown key %q", k.Value)
		return false
	}
	return ok
}

// complete checks that the evaluation says what it measures; false, reported at n, when not.
func (e *Evaluation) complete(n *yaml.Node, bad badFunc) bool {
	switch {
	case e.Metric == "":
		bad(n, evaluationExample, ".evaluation has no metric")
	case e.Field == "":
		bad(n, evaluationExample, ".evaluation has no field: name the result field it measures")
	case e.Metric == MetricRate && e.Equals == "":
		bad(n, "e.g. equals: approve", ".evaluation: metric rate needs equals: the value counted")
	case e.Metric == MetricScore && e.Equals != "":
		bad(n, "remove equals, or write metric: rate", ".evaluation: equals is for metric rate")
	default:
		return true
	}
	return false
}

func readJudge(n *yaml.Node, bad badFunc) JudgeConfig {
	const ex = "e.g. judge: { enabled: true, agent: codex, model: gpt-5-codex }"
	j := JudgeConfig{Agent: agent.Default}
	if n.Kind != yaml.MappingNode {
		bad(n, ex, ".judge must be a mapping")
		return JudgeConfig{}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "enabled":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				bad(v, "true or false", ".judge.enabled must be true or false, not %q", v.Value)
				continue
			}
			j.Enabled = v.Value == "true"
		case "agent":
			if _, ok := agent.Lookup(v.Value); v.Kind != yaml.ScalarNode || !ok {
				bad(v, fmt.Sprintf("one of %v", agent.Names()), ".judge.agent %q is no agent preset", v.Value)
				continue
			}
			j.Agent = v.Value
		case "model":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" {
				bad(v, "e.g. model: gpt-5-codex", ".judge.model must be a non-empty string")
				continue
			}
			j.Model = v.Value
		default:
			bad(k, ir.Suggest(k.Value, []string{"enabled", "agent", "model"}), ".judge: unknown key %q", k.Value)
		}
	}
	return j
}
