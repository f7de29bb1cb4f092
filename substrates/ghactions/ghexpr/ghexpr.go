// Package ghexpr evaluates GitHub Actions expressions ("${{ … }}") the way GitHub does, for the
// operators, literals and functions the compiled workflows use: the tests read a generated
// workflow's values through it, and the GitHub runner's conformance probe computes what a job's
// environment holds for a run.
package ghexpr

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// Eval evaluates value as GitHub reads a workflow's value: each "${{ … }}" in it is replaced by
// its expression's value, the rest is kept as is (a value without one is returned as is). ctx
// maps a dotted context path ("github.actor", "inputs.ROLE", an object filter's
// "github.event.issue.labels.*.name" to a []any) to its value; a path it lacks is null. It
// returns the value as an env var would read it, or an error for an expression that does not
// parse or uses what Eval does not support.
func Eval(value string, ctx map[string]any) (string, error) {
	if !strings.Contains(value, "${{") {
		return value, nil
	}
	lower := make(map[string]any, len(ctx)) // context names are case-insensitive
	for k, v := range ctx {
		lower[strings.ToLower(k)] = v
	}
	var out strings.Builder
	for rest := value; ; {
		i := strings.Index(rest, "${{")
		if i < 0 {
			out.WriteString(rest)
			return out.String(), nil
		}
		out.WriteString(rest[:i])
		lex := actionlint.NewExprLexer(rest[i+3:])
		node, err := actionlint.NewExprParser().Parse(lex)
		if err != nil {
			return "", fmt.Errorf("%s does not parse: %v", value, err)
		}
		e := evaluator{ctx: lower}
		v := e.eval(node)
		if e.err != nil {
			return "", fmt.Errorf("%s: %v", value, e.err)
		}
		s, ok := scalar(v)
		if !ok {
			return "", fmt.Errorf("%s: unexpected value %T", value, v)
		}
		out.WriteString(s)
		rest = rest[i+3+lex.Offset():]
	}
}

// scalar is v as a string reads it: null is empty; false if v is not a scalar.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case bool:
		return strconv.FormatBool(v), true
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// evaluator evaluates one expression; err is its first failure.
type evaluator struct {
	ctx map[string]any
	err error
}

func (e *evaluator) fail(format string, args ...any) any {
	if e.err == nil {
		e.err = fmt.Errorf(format, args...)
	}
	return nil
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0 && !math.IsNaN(v)
	}
	return true
}

// number is v as GitHub coerces an operand of another type for a comparison: null is 0, a
// boolean 1 or 0, a string its number (0 when empty, else NaN when it is none).
func number(v any) float64 {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		return v
	case string:
		if strings.TrimSpace(v) == "" {
			return 0
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f
		}
	}
	return math.NaN()
}

// ctxPath is the dotted context path of a variable or property access.
func ctxPath(n actionlint.ExprNode) string {
	switch n := n.(type) {
	case *actionlint.VariableNode:
		return n.Name
	case *actionlint.ObjectDerefNode:
		return ctxPath(n.Receiver) + "." + n.Property
	case *actionlint.ArrayDerefNode: // an object filter: labels.*
		return ctxPath(n.Receiver) + ".*"
	}
	return ""
}

func (e *evaluator) eval(n actionlint.ExprNode) any {
	switch n := n.(type) {
	case *actionlint.StringNode:
		return n.Value
	case *actionlint.BoolNode:
		return n.Value
	case *actionlint.NullNode:
		return nil
	case *actionlint.VariableNode, *actionlint.ObjectDerefNode, *actionlint.ArrayDerefNode:
		return e.ctx[strings.ToLower(ctxPath(n))]
	case *actionlint.NotOpNode:
		return !truthy(e.eval(n.Operand))
	case *actionlint.LogicalOpNode:
		l := e.eval(n.Left)
		if (n.Kind == actionlint.LogicalOpNodeKindAnd) != truthy(l) {
			return l
		}
		return e.eval(n.Right)
	case *actionlint.IntNode:
		return float64(n.Value)
	case *actionlint.FloatNode:
		return n.Value
	case *actionlint.CompareOpNode:
		l, r := e.eval(n.Left), e.eval(n.Right)
		eq := equal(l, r)
		switch n.Kind {
		case actionlint.CompareOpNodeKindEq:
			return eq
		case actionlint.CompareOpNodeKindNotEq:
			return !eq
		}
	case *actionlint.FuncCallNode:
		return e.call(n)
	}
	return e.fail("%T is not supported", n)
}

// equal is GitHub's ==: two strings compare ignoring case; operands of other types compare as
// numbers (number), NaN equal to nothing.
func equal(l, r any) bool {
	ls, lok := l.(string)
	rs, rok := r.(string)
	if lok && rok {
		return strings.EqualFold(ls, rs)
	}
	return number(l) == number(r)
}

// call evaluates the functions the compiled workflows use. No run Eval reads is cancelled: always()
// is true, cancelled() false.
func (e *evaluator) call(n *actionlint.FuncCallNode) any {
	args := make([]any, len(n.Args))
	strs := make([]string, len(n.Args)+2) // room for the arguments a bad call lacks
	for i, a := range n.Args {
		args[i] = e.eval(a)
		strs[i], _ = args[i].(string)
	}
	switch strings.ToLower(n.Callee) {
	case "always":
		return true
	case "cancelled":
		return false
	case "endswith":
		return strings.HasSuffix(strings.ToUpper(strs[0]), strings.ToUpper(strs[1]))
	case "startswith":
		// Not case sensitive (GitHub's docs): .NET's OrdinalIgnoreCase, each character's simple
		// upper case, which strings.ToUpper is.
		return strings.HasPrefix(strings.ToUpper(strs[0]), strings.ToUpper(strs[1]))
	case "format":
		out := strs[0]
		for i, s := range strs[1 : len(strs)-2] {
			out = strings.ReplaceAll(out, "{"+strconv.Itoa(i)+"}", s)
		}
		return out
	case "fromjson":
		var v any
		if err := json.Unmarshal([]byte(strs[0]), &v); err != nil {
			return e.fail("fromJSON(%q): %v", strs[0], err)
		}
		return v
	case "contains":
		if len(args) > 0 {
			if list, ok := args[0].([]any); ok {
				return slices.ContainsFunc(list, func(x any) bool { s, _ := x.(string); return strings.EqualFold(s, strs[1]) })
			}
		}
		return strings.Contains(strings.ToUpper(strs[0]), strings.ToUpper(strs[1]))
	}
	return e.fail("function %s is not supported", n.Callee)
}
