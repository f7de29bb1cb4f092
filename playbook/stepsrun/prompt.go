package stepsrun

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/steps"
)

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`) })

// lookup is a variable's value: a captured output or answer, else an input.
func lookup(st *state, name string) string {
	if v, ok := st.Vars[name]; ok {
		return v
	}
	return st.Inputs[name]
}

// subst replaces {{name}} by the input or output of that name; an unknown name stays as written.
func subst(text string, st *state) string {
	return placeholder().ReplaceAllStringFunc(text, func(m string) string {
		name := placeholder().FindStringSubmatch(m)[1]
		if v, ok := st.Vars[name]; ok {
			return v
		}
		if v, ok := st.Inputs[name]; ok {
			return v
		}
		return m
	})
}

// compose is the prompt of u: the system prompt, the outputs of the steps before it, and its
// own body, with what its @output expects.
func compose(p *steps.Playbook, st *state, u unit, body, answer string) string {
	var b strings.Builder
	if sys := strings.TrimSpace(subst(p.System.Value, st)); sys != "" {
		b.WriteString(sys)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "# %s\n\n", p.Title.Value)
	prior := false
	for _, rec := range st.Records {
		if rec.Status != "ok" || rec.Output == "" && rec.Answer == "" {
			continue
		}
		if !prior {
			b.WriteString("## Outputs of the previous steps\n\n")
			prior = true
		}
		fmt.Fprintf(&b, "### STEP %s: %s\n\n", rec.Step, rec.Title)
		if rec.Answer != "" {
			fmt.Fprintf(&b, "The person answered: %s\n\n", rec.Answer)
		}
		if rec.Output != "" {
			b.WriteString(rec.Output)
			b.WriteString("\n\n")
		}
	}
	fmt.Fprintf(&b, "## Now: STEP %s: %s\n\n", u.Label, u.Title.Value)
	if answer != "" {
		fmt.Fprintf(&b, "Asked %q, the person answered: %s\n\n", subst(u.Elicit.Prompt, st), answer)
	}
	fmt.Fprintf(&b, "%s\n", body)
	if o := u.Output; o != nil {
		b.WriteString("\n")
		b.WriteString(expect(o))
		b.WriteString("\n")
	}
	return b.String()
}

// expect tells the agent what its final message must be.
func expect(o *steps.Output) string {
	what := "the value"
	switch o.Type {
	case steps.Number:
		what = "a number"
	case steps.Boolean:
		what = "true or false"
	case "json":
		what = "a JSON value"
	case steps.Enum:
		what = "exactly one of: " + strings.Join(o.Options, ", ")
	}
	if o.Extract != "" {
		return fmt.Sprintf("Your final message is a JSON object whose %q member is %s (captured as %s), and nothing else.", o.Extract, what, o.Var.Value)
	}
	return fmt.Sprintf("Your final message is %s (captured as %s), and nothing else.", what, o.Var.Value)
}

// capture reads o's value from the final message msg, checked against its type.
func capture(o *steps.Output, msg string) (string, error) {
	v := strings.TrimSpace(msg)
	if o.Extract != "" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(unfence(v)), &obj); err != nil {
			return "", fmt.Errorf("extract %q needs the final message to be a JSON object, and it is not (%v): %s", o.Extract, err, clip(v))
		}
		raw, ok := obj[o.Extract]
		if !ok {
			return "", fmt.Errorf("the final message has no %q member: %s", o.Extract, clip(v))
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			v = s
		} else {
			v = string(raw)
		}
	}
	switch o.Type {
	case steps.Number:
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return "", fmt.Errorf("declares a number, and the agent answered %q", clip(v))
		}
		return strings.TrimSpace(v), nil
	case steps.Boolean:
		switch b := strings.ToLower(strings.Trim(strings.TrimSpace(v), "`\".")); b {
		case "true", "false":
			return b, nil
		}
		return "", fmt.Errorf("declares a boolean, and the agent answered %q (not true or false)", clip(v))
	case "json":
		j := unfence(v)
		if !json.Valid([]byte(j)) {
			return "", fmt.Errorf("declares json, and the agent's answer is not JSON: %s", clip(v))
		}
		return j, nil
	case steps.Enum:
		w := strings.Trim(strings.TrimSpace(v), "`\"'.")
		for _, opt := range o.Options {
			if strings.EqualFold(w, opt) {
				return opt, nil
			}
		}
		return "", fmt.Errorf("the agent answered %q, which is not one of %s", clip(v), strings.Join(o.Options, ", "))
	}
	return v, nil
}

// unfence takes the JSON out of one ``` fenced block, if that is all s is.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	t = strings.TrimSuffix(t[3:], "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 && !strings.ContainsAny(t[:i], "{[\"") {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func at(file string, p ir.Pos) string { return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col) }
