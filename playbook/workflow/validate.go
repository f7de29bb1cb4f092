package workflow

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

var (
	namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
	idPattern   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`) })
	refPattern  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_-]*)\.([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+)*)`)
	})
)

// Validate checks the rules of a workflow that need more than its shape: names, unique step ids,
// namespaces, references and conditions, and secret literals.
func Validate(w *Workflow) ir.Diagnostics {
	r := &source.Reporter{File: w.File}
	v := validator{r: r, w: w, ids: map[string]int{}}
	v.names()
	for i, s := range w.Steps {
		v.step(i, s)
	}
	v.secrets()
	return r.Diags
}

type validator struct {
	r   *source.Reporter
	w   *Workflow
	ids map[string]int // step id → index of its first declaration
	// self is set while a postcondition is checked: it may read its own step's output.
	self bool
}

func (v *validator) names() {
	w := v.w
	switch {
	case !w.Name.Pos.IsSet():
		v.r.Errorf(ir.Pos{Line: 1, Col: 1}, "e.g. name: inbox-triage", "the workflow has no name")
	case w.Name.Value != "" && !namePattern().MatchString(w.Name.Value):
		v.r.Errorf(w.Name.Pos, "use letters, digits, '.', '_' and '-', e.g. inbox-triage", "workflow name %q is not a valid name", w.Name.Value)
	}
	for _, a := range w.Args {
		if !idPattern().MatchString(a.Name.Value) {
			v.r.Errorf(a.Name.Pos, "start with a letter; use letters, digits, '_' and '-'", "arg name %q is not a valid name", a.Name.Value)
		}
	}
	if len(w.Steps) == 0 {
		at := w.StepsPos
		if !at.IsSet() {
			at = ir.Pos{Line: 1, Col: 1}
		}
		v.r.Errorf(at, stepExample, "the workflow has no steps")
	}
	for i, s := range w.Steps {
		id := s.ID.Value
		switch {
		case !s.ID.Pos.IsSet():
			v.r.Errorf(s.Pos, "give every step an id, e.g. id: collect", "step %d has no id", i+1)
		case id == "":
			// reported by Parse
		case id == SecretsRef || id == ArgsRef:
			v.r.Errorf(s.ID.Pos, "rename the step", "step id %q is reserved ($%s.NAME is how a workflow reads %s)", id, id, map[string]string{SecretsRef: "secrets", ArgsRef: "its args"}[id])
		case !idPattern().MatchString(id):
			v.r.Errorf(s.ID.Pos, "start with a letter; use letters, digits, '_' and '-', e.g. collect", "step id %q is not a valid id", id)
		default:
			if first, dup := v.ids[id]; dup {
				v.r.Errorf(s.ID.Pos, fmt.Sprintf("rename one; the first is on line %d", w.Steps[first].ID.Pos.Line), "duplicate step id %q", id)
				continue
			}
			v.ids[id] = i
		}
	}
}

func (v *validator) step(i int, s *Step) {
	who := stepName(i, s)
	switch {
	case !s.Command.Pos.IsSet():
		v.r.Errorf(s.Pos, "e.g. command: cli inbox list --json", "%s has no command", who)
	case s.Command.Value == "":
		// reported by Parse
	case !contains(Namespaces, s.Namespace):
		hint := ir.Suggest(s.Namespace, Namespaces)
		if !strings.HasPrefix(hint, "did you mean") {
			hint = "start the command with its namespace, e.g. cli " + strings.TrimSpace(s.Command.Value) + " (namespaces: " + strings.Join(Namespaces, ", ") + ")"
		}
		v.r.Errorf(s.Command.Pos, hint, "%s: unknown command namespace %q", who, s.Namespace)
	case s.Rest == "":
		v.r.Errorf(s.Command.Pos, "e.g. command: "+s.Namespace+" inbox list", "%s: the %s command names nothing to run", who, s.Namespace)
	}
	v.words(who, s)
	if s.Output.Value != "" && s.Output.Value != "json" && s.Output.Value != "text" {
		v.r.Errorf(s.Output.Pos, ir.Suggest(s.Output.Value, []string{"json", "text"}), "%s: unknown output %q", who, s.Output.Value)
	}
	if s.Approval.Value != "" && !s.IsApproval() {
		v.r.Errorf(s.Approval.Pos, "write approval: required, or remove the key", "%s: unknown approval %q", who, s.Approval.Value)
	}
	if s.Prompt.Pos.IsSet() && !s.IsApproval() {
		v.r.Errorf(s.Prompt.Pos, "add approval: required, or remove prompt", "%s: prompt is the question of an approval gate, and this step is not one", who)
	}
	if s.TimeoutMs.Pos.IsSet() && s.TimeoutMs.Value <= 0 {
		v.r.Errorf(s.TimeoutMs.Pos, "a whole number of milliseconds, e.g. 30000", "%s: timeoutMs must be positive", who)
	}
	if c := s.Cwd; c.Value != "" {
		if clean := path.Clean(c.Value); path.IsAbs(c.Value) || clean == ".." || strings.HasPrefix(clean, "../") {
			v.r.Errorf(c.Pos, "give a path inside the workspace, e.g. cwd: app", "%s: cwd %q leaves the workspace", who, c.Value)
		}
	}
	for _, val := range []ir.String{s.Command, s.Stdin, s.Cwd, s.Prompt, s.Condition} {
		v.refs(i, who, val)
	}
	for _, e := range s.Env {
		v.refs(i, who, e.Value)
	}
	v.checks(i, who, s) // checks.go
	if c := s.Condition; c.Value != "" {
		n := 0
		for _, ref := range v.find(c) {
			if _, ok := v.ids[ref.Name]; ok && (ref.Field == FieldApproved || ref.Field == FieldStdout || ref.Field == FieldJSON) {
				n++
			}
		}
		if n == 0 {
			v.r.Errorf(c.Pos, "e.g. condition: $approve.approved, or a test of an earlier step's $id.json", "%s: the condition must reference an approval or an output of an earlier step", who)
		}
	}
}

// words splits the command as the runtime does, and reports what cannot be split where it is
// written: a command that validates is a command that runs.
func (v *validator) words(who string, s *Step) {
	if s.Rest == "" {
		return
	}
	words, at, err := wordsAt(s.Rest)
	we, ok := err.(*WordsError)
	if !ok {
		v.grammar(who, s, words, at)
		return
	}
	off := restOffset(s.Command.Value) + we.Offset
	fix := we.Fix
	switch s.Rest[we.Offset] {
	case '"':
		fix = `close the quote with another ", or write a literal quote as \"`
	case '\'':
		fix = `close the quote with another ', or write a literal quote as \'`
	}
	v.r.Errorf(v.w.place(s.Command, s.Command.Value[off:off+1], off), fix, "%s: %s", who, we.Problem)
}

// grammar checks the words of an http or mcp command with the parser the runtime uses
// (ParseHTTP, ParseMCP), and reports what does not fit at the word, or after the last word when
// one is missing. at holds the offset in Rest of each word.
func (v *validator) grammar(who string, s *Step, words []string, at []int) {
	var perr *ArgError
	switch s.Namespace {
	case "http":
		_, perr = ParseHTTP(words, Dynamic)
	case "mcp":
		_, perr = ParseMCP(words, Dynamic)
	}
	if perr == nil {
		return
	}
	base := restOffset(s.Command.Value)
	off, text := base+len(strings.TrimRightFunc(s.Rest, unicode.IsSpace)), ""
	if perr.Word >= 0 {
		off = base + at[perr.Word]
		text = s.Command.Value[off : off+1]
	}
	v.r.Errorf(v.w.place(s.Command, text, off), perr.Fix, "%s: %s", who, perr.Problem)
}

func stepName(i int, s *Step) string {
	if s.ID.Value != "" {
		return fmt.Sprintf("step %q", s.ID.Value)
	}
	return fmt.Sprintf("step %d", i+1)
}

// refs checks every $name.field reference of a value of step i.
func (v *validator) refs(i int, who string, val ir.String) {
	for _, ref := range v.find(val) {
		switch ref.Name {
		case SecretsRef:
			continue
		case ArgsRef:
			if !v.hasArg(ref.Field) {
				v.r.Errorf(ref.Pos, ir.Suggest(ref.Field, v.argNames()), "%s: %s names an undeclared arg %q", who, ref.Text, ref.Field)
			}
			continue
		}
		j, isStep := v.ids[ref.Name]
		isField := ref.Field == FieldStdout || ref.Field == FieldJSON || ref.Field == FieldApproved
		switch {
		case !isStep && !isField:
			continue // not a reference, e.g. $HOME.d in a command
		case !isStep:
			v.r.Errorf(ref.Pos, v.earlierHint(i, ref.Name), "%s: %s names no step %q", who, ref.Text, ref.Name)
		case !isField:
			v.r.Errorf(ref.Pos, ir.Suggest(ref.Field, []string{FieldStdout, FieldJSON, FieldApproved}), "%s: %s reads an unknown field %q of step %q", who, ref.Text, ref.Field, ref.Name)
		case j == i && !v.self:
			v.r.Errorf(ref.Pos, "a step reads only the steps before it", "%s: %s refers to the step itself", who, ref.Text)
		case j > i:
			v.r.Errorf(ref.Pos, "move step "+fmt.Sprintf("%q", ref.Name)+" before this one", "%s: %s refers to a later step", who, ref.Text)
		case ref.Field == FieldJSON && v.w.Steps[j].Output.Value != "json" && v.w.Steps[j].Schema == nil:
			v.r.Errorf(ref.Pos, fmt.Sprintf("add output: json to step %q, or read $%s.stdout", ref.Name, ref.Name), "%s: %s reads JSON from a step that does not declare output: json", who, ref.Text)
		case ref.Field == FieldApproved && !v.w.Steps[j].IsApproval():
			v.r.Errorf(ref.Pos, fmt.Sprintf("add approval: required to step %q", ref.Name), "%s: %s reads the approval of a step that is not an approval gate", who, ref.Text)
		case ref.Field != FieldJSON && ref.Path != "":
			v.r.Errorf(ref.Pos, fmt.Sprintf("read fields from $%s.json", ref.Name), "%s: %s reads a field of %s, which is not JSON", who, ref.Text, ref.Field)
		}
	}
}

func (v *validator) earlierHint(i int, name string) string {
	var ids []string
	for _, s := range v.w.Steps[:i] {
		if s.ID.Value != "" {
			ids = append(ids, s.ID.Value)
		}
	}
	if len(ids) == 0 {
		return "no step comes before this one"
	}
	return ir.Suggest(name, ids)
}

func (v *validator) hasArg(name string) bool {
	for _, a := range v.w.Args {
		if a.Name.Value == name {
			return true
		}
	}
	return false
}

func (v *validator) argNames() []string {
	out := make([]string, len(v.w.Args))
	for i, a := range v.w.Args {
		out[i] = a.Name.Value
	}
	if len(out) == 0 {
		return []string{"(none declared)"}
	}
	return out
}

// find lists the references in a value, each placed where it is written in the file.
func (v *validator) find(val ir.String) []Ref {
	if val.Value == "" {
		return nil
	}
	var out []Ref
	for _, m := range refPattern().FindAllStringSubmatchIndex(val.Value, -1) {
		text := val.Value[m[0]:m[1]]
		out = append(out, Ref{Text: text, Name: val.Value[m[2]:m[3]], Field: val.Value[m[4]:m[5]], Path: strings.TrimPrefix(val.Value[m[6]:m[7]], "."), Pos: v.w.place(val, text, m[0])})
	}
	return out
}

// place finds where the text at byte offset off of a value is written: on the value's own line
// when the value is written there as is (plain or quoted on one line), else at the value.
func (w *Workflow) place(val ir.String, text string, off int) ir.Pos {
	l := val.Pos.Line - 1
	if l < 0 || l >= len(w.lines) || val.Pos.Col < 1 || val.Pos.Col > len(w.lines[l]) {
		return val.Pos
	}
	line := w.lines[l][val.Pos.Col-1:]
	if line[0] == '|' || line[0] == '>' {
		return w.placeInBlock(val, text, off)
	}
	// The value's prefix up to the reference, as written, locates it exactly; otherwise the first
	// occurrence of the reference text on the line does.
	for _, skip := range []int{0, 1} { // 1: an opening quote
		if skip <= len(line) && strings.HasPrefix(line[skip:], val.Value[:off]+text) {
			return ir.Pos{Line: val.Pos.Line, Col: val.Pos.Col + skip + off}
		}
	}
	if i := strings.Index(line, text); i >= 0 {
		return ir.Pos{Line: val.Pos.Line, Col: val.Pos.Col + i}
	}
	return val.Pos
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
