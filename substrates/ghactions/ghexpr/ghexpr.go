// Package ghexpr evaluates GitHub Actions expressions ("${{ … }}") the way GitHub does, for the
// operators, literals and functions the compiled workflows use: the tests read a generated
// workflow's values through it, and the GitHub runner's conformance probe computes what a job's
// environment holds for a run.
package ghexpr

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// Eval evaluates value, a "${{ … }}" expression or a literal (returned as is): ctx maps a dotted
// context path ("github.actor", "inputs.ROLE") to its value; a path it lacks is null. It returns
// the value as an env var would read it, or an error for an expression that does not parse or
// uses what Eval does not support.
func Eval(value string, ctx map[string]any) (string, error) {
	src, ok := strings.CutPrefix(value, "${{ ")
	if !ok {
		return value, nil
	}
	node, err := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(src))
	if err != nil {
		return "", fmt.Errorf("%s does not parse: %v", value, err)
	}
	lower := make(map[string]any, len(ctx)) // context names are case-insensitive
	for k, v := range ctx {
		lower[strings.ToLower(k)] = v
	}
	e := evaluator{ctx: lower}
	v := e.eval(node)
	if e.err != nil {
		return "", fmt.Errorf("%s: %v", value, e.err)
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case bool:
		return strconv.FormatBool(v), nil
	case string:
		return v, nil
	}
	return "", fmt.Errorf("%s: unexpected value %T", value, v)
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
	}
	return true
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
	case *actionlint.CompareOpNode:
		l, r := e.eval(n.Left), e.eval(n.Right)
		ls, _ := l.(string)
		rs, _ := r.(string)
		eq := strings.EqualFold(ls, rs) // GitHub compares strings ignoring case; null reads as ''
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

// call evaluates the functions the compiled workflows use.
func (e *evaluator) call(n *actionlint.FuncCallNode) any {
	args := make([]any, len(n.Args))
	strs := make([]string, len(n.Args)+2) // room for the arguments a bad call lacks
	for i, a := range n.Args {
		args[i] = e.eval(a)
		strs[i], _ = args[i].(string)
	}
	switch strings.ToLower(n.Callee) {
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
