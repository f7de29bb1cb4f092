package local

import (
	"math"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/substrates"
)

// DefaultRunRequests is the most model requests one session makes unless
// policy.box.local.model.budget says otherwise (the reference's --max-requests); tokens and cost
// are unlimited by default.
const DefaultRunRequests = 250

// ModelPolicy is what the model proxy beside a preset's session enforces
// (policy.box.local.model as a mapping; docs/local.md).
type ModelPolicy struct {
	// Budget bounds one session; Daily all of one actor's sessions since local midnight. A zero
	// field is unlimited.
	Budget modelproxy.Budget `json:"budget"`
	Daily  modelproxy.Budget `json:"daily"`
	// Prices by model name, "*" the fallback; nil for modelproxy.DefaultPrices.
	Prices map[string]modelproxy.Price `json:"prices,omitempty"`
}

// defaultModelPolicy is the policy of a box that sets none.
func defaultModelPolicy() ModelPolicy {
	return ModelPolicy{Budget: modelproxy.Budget{Requests: DefaultRunRequests}}
}

// readModel reads policy.box.local.model: a model name, or a mapping {name, budget, daily,
// prices}. It returns the model name.
func readModel(r *substrates.BoxReader, v *yaml.Node, b *box) string {
	if v.Kind != yaml.MappingNode {
		name, _ := r.Str(v, "model", "e.g. model: gpt-5-codex, or model: { name: gpt-5-codex, budget: { requests: 100 } }")
		return name
	}
	name := ""
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "name":
			name, _ = r.Str(val, "model.name", "e.g. name: gpt-5-codex")
		case "budget":
			readBudget(r, val, "model.budget", &b.modelPolicy.Budget)
		case "daily":
			readBudget(r, val, "model.daily", &b.modelPolicy.Daily)
		case "prices":
			b.modelPolicy.Prices = readPrices(r, val)
		default:
			r.Errorf(k, "one of: name, budget, daily, prices", "model.%s is not a model setting", k.Value)
		}
	}
	return name
}

// readBudget reads {requests, tokens, cost_usd} into out; a key left out keeps its value.
func readBudget(r *substrates.BoxReader, v *yaml.Node, what string, out *modelproxy.Budget) {
	if v.Kind != yaml.MappingNode {
		r.Errorf(v, "e.g. "+what+": { requests: 100, tokens: 2000000, cost_usd: 5 }", "%s must be a mapping", what)
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "requests":
			if n, ok := r.Int(val, what+".requests", "a whole number of requests, 0 for no limit", 0, math.MaxInt32); ok {
				out.Requests = int64(n)
			}
		case "tokens":
			if n, ok := r.Int(val, what+".tokens", "a whole number of tokens, 0 for no limit", 0, math.MaxInt); ok {
				out.Tokens = int64(n)
			}
		case "cost_usd":
			if f, ok := number(r, val, what+".cost_usd", "US dollars, e.g. cost_usd: 2.5, 0 for no limit"); ok {
				out.CostUSD = f
			}
		default:
			r.Errorf(k, "one of: requests, tokens, cost_usd", "%s.%s is not a budget limit", what, k.Value)
		}
	}
}

// readPrices reads {MODEL: {input, cached_input, output}}, US dollars per million tokens.
func readPrices(r *substrates.BoxReader, v *yaml.Node) map[string]modelproxy.Price {
	const example = `e.g. prices: { gpt-5-codex: { input: 1.25, cached_input: 0.125, output: 10 }, "*": { input: 15, cached_input: 15, output: 75 } }`
	if v.Kind != yaml.MappingNode {
		r.Errorf(v, example, "model.prices must be a mapping of model names")
		return nil
	}
	out := map[string]modelproxy.Price{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		what := "model.prices." + k.Value
		if val.Kind != yaml.MappingNode {
			r.Errorf(val, example, "%s must be a mapping {input, cached_input, output}", what)
			continue
		}
		var p modelproxy.Price
		for j := 0; j+1 < len(val.Content); j += 2 {
			pk, pv := val.Content[j], val.Content[j+1]
			f, ok := number(r, pv, what+"."+pk.Value, "US dollars per million tokens, e.g. 1.25")
			switch pk.Value {
			case "input":
				p.Input = f
			case "cached_input":
				p.CachedInput = f
			case "output":
				p.Output = f
			default:
				if ok {
					r.Errorf(pk, "one of: input, cached_input, output", "%s.%s is not a price", what, pk.Value)
				}
			}
		}
		out[k.Value] = p
	}
	if _, ok := out["*"]; !ok {
		out["*"] = modelproxy.DefaultPrices["*"] // a model the table does not name is priced high
	}
	return out
}

// number reads a finite, non-negative number.
func number(r *substrates.BoxReader, v *yaml.Node, what, example string) (float64, bool) {
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") {
		r.Errorf(v, example, "%s must be a number", what)
		return 0, false
	}
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		r.Errorf(v, example, "%s is %s; it must be a number of at least 0", what, v.Value)
		return 0, false
	}
	return f, true
}

// readEnvNames reads policy.box.local.env: the names of the runner's environment variables
// every session of this profile receives besides the allowlist (sessionenv.go).
func readEnvNames(r *substrates.BoxReader, v *yaml.Node) []string {
	const example = "e.g. env: [GH_TOKEN, NPM_CONFIG_REGISTRY]"
	if v.Kind != yaml.SequenceNode {
		r.Errorf(v, example, "env must be a list of environment variable names")
		return nil
	}
	var out []string
	for _, c := range v.Content {
		if c.Kind != yaml.ScalarNode || !secretName().MatchString(c.Value) {
			r.Errorf(c, example, "env: %q is not an environment variable name", c.Value)
			continue
		}
		out = append(out, c.Value)
	}
	return out
}
