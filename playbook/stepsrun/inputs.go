package stepsrun

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/steps"
)

// bindInputs merges the given inputs over the declared defaults, before anything runs: an
// undeclared one (unless lenient), an enum value not listed, a number that is not one, and a
// required input not given are refused, each naming the input, where it is declared and the fix.
func bindInputs(p *steps.Playbook, argsJSON string, lenient bool) (map[string]string, error) {
	given := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		if err := json.Unmarshal([]byte(argsJSON), &given); err != nil {
			return nil, fmt.Errorf("--args-json is not a JSON object: %v", err)
		}
	}
	out := map[string]string{}
	declared := map[string]*steps.Input{}
	for _, in := range p.Inputs {
		declared[in.Name.Value] = in
		if !in.Required {
			out[in.Name.Value] = in.Default
		}
	}
	var unknown []string
	for k, v := range given {
		if declared[k] == nil {
			unknown = append(unknown, k)
			continue
		}
		out[k] = engine.ArgString(v)
	}
	if len(unknown) > 0 && !lenient {
		sort.Strings(unknown)
		return nil, fmt.Errorf("--args-json: the playbook declares no input %s (its inputs: %s)", strings.Join(unknown, ", "), names(p))
	}
	for _, in := range p.Inputs {
		name := in.Name.Value
		v, ok := out[name]
		where := at(p.File, in.Name.Pos)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: the input %q is required and has no default: give it with --args-json '{\"%s\": \"…\"}' (or declare a default: - `%s` (%s: value))", where, name, name, name, in.TypeAs)
		case in.Type == steps.Enum && !contains(in.Options, v):
			return nil, fmt.Errorf("%s: the input %q is %q, which is not one of %s", where, name, v, strings.Join(in.Options, ", "))
		case in.Type == steps.Number:
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return nil, fmt.Errorf("%s: the input %q is a number, and %q is not", where, name, v)
			}
		case in.Type == steps.Boolean && v != "true" && v != "false":
			return nil, fmt.Errorf("%s: the input %q is true or false, not %q", where, name, v)
		}
	}
	return out, nil
}

func names(p *steps.Playbook) string {
	if len(p.Inputs) == 0 {
		return "none"
	}
	out := make([]string, len(p.Inputs))
	for i, in := range p.Inputs {
		out[i] = in.Name.Value
	}
	return strings.Join(out, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
