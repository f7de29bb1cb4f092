package workflow

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

var (
	topKeys  = []string{"name", "description", "args", "steps"}
	argKeys  = []string{"default", "description"}
	stepKeys = []string{"id", "command", "description", "output", "stdin", "approval", "prompt", "condition", "cwd", "env", "timeoutMs", "schema", "postcondition"}
)

const (
	example     = "e.g. name: inbox-triage, steps: [{ id: collect, command: cli inbox list --json }]"
	stepExample = "e.g. steps: [{ id: collect, command: cli inbox list --json }]"
)

// Check parses data as the workflow file and validates it: every diagnostic, sorted.
func Check(file string, data []byte) (*Workflow, ir.Diagnostics) {
	w, diags := Parse(file, data)
	if w != nil {
		diags = append(diags, Validate(w)...)
	}
	return w, diags.Sort()
}

// Parse reads a workflow file (YAML, or JSON, which YAML reads too). It reports the problems of
// shape: syntax, unknown and duplicate keys, wrong types. The workflow is nil only when nothing
// could be read.
func Parse(file string, data []byte) (*Workflow, ir.Diagnostics) {
	r := &source.Reporter{File: file}
	at := ir.Pos{Line: 1, Col: 1}
	if len(data) > MaxSize {
		r.Errorf(at, "split the workflow", "the workflow is %d bytes; the limit is %d", len(data), MaxSize)
		return nil, r.Diags
	}
	if strings.TrimSpace(string(data)) == "" {
		r.Errorf(at, example, "the workflow is empty")
		return nil, r.Diags
	}
	root := source.ParseYAML(r, data, at, "the workflow", example)
	if root == nil {
		return nil, r.Diags
	}
	lines := source.Lines(data)
	w := &Workflow{File: file, lines: make([]string, len(lines))}
	for i, l := range lines {
		w.lines[i] = l.Text
	}
	source.Fields(r, root, "the workflow", topKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			w.Name = str(r, v, "name", "e.g. name: inbox-triage")
		case "description":
			w.Description = str(r, v, "description", "")
		case "args":
			w.Args = args(r, v)
		case "steps":
			w.StepsPos = source.PosOf(k)
			w.Steps = steps(r, k, v)
		}
	})
	return w, r.Diags
}

func str(r *source.Reporter, n *yaml.Node, what, ex string) ir.String {
	v, _ := source.Str(r, n, what, ex)
	return ir.String{Value: v.Value, Pos: v.Pos}
}

func args(r *source.Reporter, n *yaml.Node) []*Arg {
	const ex = "e.g. args: { tag: { default: family } }"
	if source.IsNull(n) || !source.Mapping(r, n, "args", ex) {
		return nil
	}
	var out []*Arg
	source.Fields(r, n, "args", nil, func(name string, k, v *yaml.Node) {
		a := &Arg{Name: ir.String{Value: name, Pos: source.PosOf(k)}}
		out = append(out, a)
		if source.IsNull(v) {
			return
		}
		if !source.Mapping(r, v, "arg "+strconv.Quote(name), ex) {
			return
		}
		source.Fields(r, v, "arg "+strconv.Quote(name), argKeys, func(key string, _, v *yaml.Node) {
			switch key {
			case "default":
				if s, ok := source.Scalar(r, v, "the default of arg "+strconv.Quote(name), ex); ok {
					a.Default = &ir.String{Value: s.Value, Pos: s.Pos}
				}
			case "description":
				a.Description = str(r, v, "the description of arg "+strconv.Quote(name), "")
			}
		})
	})
	return out
}

func steps(r *source.Reporter, k, n *yaml.Node) []*Step {
	if n.Kind != yaml.SequenceNode {
		if source.IsNull(n) {
			return nil // reported by Validate as an empty workflow
		}
		r.Errorf(source.PosOf(n), stepExample, "steps must be a list, not %s", source.Describe(n))
		return nil
	}
	out := make([]*Step, 0, len(n.Content))
	for i, item := range n.Content {
		what := "step " + strconv.Itoa(i+1)
		if !source.Mapping(r, item, what, stepExample) {
			continue
		}
		s := &Step{Pos: source.PosOf(item)}
		source.Fields(r, item, what, stepKeys, func(key string, _, v *yaml.Node) {
			switch key {
			case "id":
				s.ID = str(r, v, what+": id", "e.g. id: collect")
				if s.ID.Value != "" {
					what = "step " + strconv.Quote(s.ID.Value)
				}
			case "command":
				s.Command = str(r, v, what+": command", "e.g. command: cli inbox list --json")
				s.Namespace, s.Rest, _ = strings.Cut(strings.TrimSpace(s.Command.Value), " ")
				s.Rest = strings.TrimSpace(s.Rest)
			case "description":
				s.Description = str(r, v, what+": description", "")
			case "output":
				s.Output = str(r, v, what+": output", "output: json or output: text")
			case "stdin":
				s.Stdin = str(r, v, what+": stdin", "e.g. stdin: $collect.stdout")
			case "approval":
				s.Approval = str(r, v, what+": approval", "approval: required")
			case "prompt":
				s.Prompt = str(r, v, what+": prompt", "e.g. prompt: Apply changes?")
			case "condition":
				s.Condition = str(r, v, what+": condition", "e.g. condition: $approve.approved")
			case "cwd":
				s.Cwd = str(r, v, what+": cwd", "a path inside the workspace, e.g. cwd: app")
			case "env":
				s.Env = env(r, v, what)
			case "timeoutMs":
				s.TimeoutMs = integer(r, v, what+": timeoutMs")
			case "schema":
				if source.Mapping(r, v, what+": schema", "an inline JSON Schema, e.g. schema: { type: object, required: [id] }") {
					s.Schema, s.SchemaPos = ir.JSONValue(v), source.PosOf(v)
				}
			case "postcondition":
				s.Postcondition = str(r, v, what+": postcondition", "e.g. postcondition: cli test -f out/report.json")
			}
		})
		out = append(out, s)
	}
	return out
}

func env(r *source.Reporter, n *yaml.Node, what string) []EnvVar {
	const ex = "e.g. env: { API_TOKEN: $secrets.API_TOKEN }"
	if !source.Mapping(r, n, what+": env", ex) {
		return nil
	}
	var out []EnvVar
	source.Fields(r, n, what+": env", nil, func(name string, k, v *yaml.Node) {
		s, ok := source.Scalar(r, v, what+": env "+name, ex)
		if ok {
			out = append(out, EnvVar{Name: ir.String{Value: name, Pos: source.PosOf(k)}, Value: ir.String{Value: s.Value, Pos: s.Pos}})
		}
	})
	return out
}

// MaxTimeoutMs is the largest timeoutMs of a step: a week, the longest timeout a run allows.
const MaxTimeoutMs = ir.MaxTimeout * 60_000

// integer reads a step's timeoutMs: a whole number, written in decimal (a leading zero does not
// make it octal) or with a 0x, 0o or 0b prefix, of at most MaxTimeoutMs (whether it is positive
// is Validate's to say).
func integer(r *source.Reporter, n *yaml.Node, what string) ir.Int {
	// A number of digits too large for an int64 is tagged a float: still a whole number.
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float" && strings.Trim(n.Value, "0123456789") == "") {
		base, digits := 10, strings.ReplaceAll(n.Value, "_", "")
		if d := strings.TrimLeft(digits, "+-"); len(d) > 1 && d[0] == '0' && strings.ContainsAny(d[1:2], "xXoObB") {
			base = 0
		}
		v, err := strconv.ParseInt(digits, base, 64)
		if err == nil && v <= MaxTimeoutMs {
			return ir.Int{Value: int(v), Pos: source.PosOf(n)}
		}
		if err == nil || errors.Is(err, strconv.ErrRange) {
			r.Errorf(source.PosOf(n), fmt.Sprintf("give at most %d, one week; e.g. 30000", MaxTimeoutMs), "%s %s is too large: the maximum is %d milliseconds", what, n.Value, MaxTimeoutMs)
			return ir.Int{}
		}
	}
	r.Errorf(source.PosOf(n), "a whole number of milliseconds, e.g. 30000", "%s must be a positive integer, not %s", what, source.Describe(n))
	return ir.Int{}
}
