package ghactions

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// evalExpr evaluates a "${{ … }}" value the way GitHub would, for the operators, literals and
// functions the compiled workflows use: ctx maps a dotted context path ("github.actor",
// "inputs.ROLE") to its value; a path it lacks is null. It returns the value as the env var would
// read it.
func evalExpr(t *testing.T, value string, ctx map[string]any) string {
	t.Helper()
	src, ok := strings.CutPrefix(value, "${{ ")
	if !ok {
		return value
	}
	node, err := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(src))
	if err != nil {
		t.Fatalf("%s does not parse: %v", value, err)
	}
	lower := make(map[string]any, len(ctx)) // context names are case-insensitive
	for k, v := range ctx {
		lower[strings.ToLower(k)] = v
	}
	switch v := eval(t, node, lower).(type) {
	case nil:
		return ""
	case bool:
		if v {
			return "true"
		}
		return "false"
	case string:
		return v
	}
	t.Fatalf("%s: unexpected value", value)
	return ""
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

func eval(t *testing.T, n actionlint.ExprNode, ctx map[string]any) any {
	switch n := n.(type) {
	case *actionlint.StringNode:
		return n.Value
	case *actionlint.BoolNode:
		return n.Value
	case *actionlint.NullNode:
		return nil
	case *actionlint.VariableNode, *actionlint.ObjectDerefNode, *actionlint.ArrayDerefNode:
		return ctx[strings.ToLower(ctxPath(n))]
	case *actionlint.NotOpNode:
		return !truthy(eval(t, n.Operand, ctx))
	case *actionlint.LogicalOpNode:
		l := eval(t, n.Left, ctx)
		if (n.Kind == actionlint.LogicalOpNodeKindAnd) != truthy(l) {
			return l
		}
		return eval(t, n.Right, ctx)
	case *actionlint.CompareOpNode:
		l, r := eval(t, n.Left, ctx), eval(t, n.Right, ctx)
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
		return call(t, n, ctx)
	}
	t.Fatalf("evalExpr: %T is not supported", n)
	return nil
}

// call evaluates the functions the compiled workflows use.
func call(t *testing.T, n *actionlint.FuncCallNode, ctx map[string]any) any {
	args := make([]any, len(n.Args))
	strs := make([]string, len(n.Args))
	for i, a := range n.Args {
		args[i] = eval(t, a, ctx)
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
		for i, s := range strs[1:] {
			out = strings.ReplaceAll(out, "{"+strconv.Itoa(i)+"}", s)
		}
		return out
	case "fromjson":
		var v any
		if err := json.Unmarshal([]byte(strs[0]), &v); err != nil {
			t.Fatalf("fromJSON(%q): %v", strs[0], err)
		}
		return v
	case "contains":
		if list, ok := args[0].([]any); ok {
			return slices.ContainsFunc(list, func(x any) bool { s, _ := x.(string); return strings.EqualFold(s, strs[1]) })
		}
		return strings.Contains(strings.ToUpper(strs[0]), strings.ToUpper(strs[1]))
	}
	t.Fatalf("evalExpr: function %s is not supported", n.Callee)
	return nil
}
