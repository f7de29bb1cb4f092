package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

var (
	stepHeading    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^STEP\s+(\d+):\s+(.+)$`) })
	subStepHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^STEP\s+(\d+)([a-z]):\s+(.+)$`) })
	looseStep      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^step\s*\d+[a-z]?\b`) })
	inputLine      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^-\\s+`([a-zA-Z][a-zA-Z0-9_]*)`\\s+\\(([^)]+)\\)(?::\\s*(.+))?$")
	})
	listItem  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*+]\s`) })
	outputDir = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^@output\((\w+)(?:\s*:\s*(\w+)(?:\s*\(([^)]*)\))?)?(?:,\s*extract:"(\w+)")?\)$`)
	})
	elicitDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@elicit\((\w+)(?:,\s*(.+))?\)$`) })
	promptDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@prompt\((.+)\)$`) })
	toolDir   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@tool\((.+)\)$`) })
	ifMarker  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^```(if|elif)\\s+(\\w+)\\s*(==|!=)\\s*\"([^\"]*)\"\\s*```$")
	})
	artifactType = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^type:\s*(\S+)$`) })
	quoted       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`) })
)

const (
	titleHint = "start the playbook with a level-1 heading such as `# Code Review`, before any ## section"
	stepHint  = "add a step: `## STEP 1: Title` followed by its prompt"
)

// Check parses data as the step playbook file and validates it: every diagnostic, sorted.
func Check(file string, data []byte) (*Playbook, ir.Diagnostics) {
	p, diags := Parse(file, data)
	if p != nil {
		diags = append(diags, Validate(p)...)
	}
	return p, diags.Sort()
}

// Parse reads a step playbook. It reports the seed's fatal errors and the format problems found
// while reading (a malformed input line, an invalid elicit type); the playbook is nil only when
// the file is empty or too large to read at all.
func Parse(file string, data []byte) (*Playbook, ir.Diagnostics) {
	r := &source.Reporter{File: file}
	if len(data) > MaxSize {
		r.Errorf(ir.Pos{Line: 1, Col: 1}, "split it into several playbooks", "the playbook is %d bytes; the limit is %d bytes (200 KB)", len(data), MaxSize)
		return nil, r.Diags
	}
	if strings.TrimSpace(string(data)) == "" {
		r.Errorf(ir.Pos{Line: 1, Col: 1}, titleHint+", then `## STEP 1: Title`", "the playbook is empty")
		return nil, r.Diags
	}
	ps := &parser{r: r, p: &Playbook{File: file}, inputs: map[string]ir.Pos{}}
	ps.run(source.Lines(data))
	return ps.p, r.Diags
}

type section int

const (
	preamble section = iota
	description
	system
	inputs
	step
	artifacts
	skipped
)

// parser walks the lines top to bottom, as the seed's reference parser does.
type parser struct {
	r      *source.Reporter
	p      *Playbook
	sec    section
	text   []string // the lines of the open section's text
	cur    *Step    // the open step
	branch *Branch  // the open branch of cur
	sub    *Step    // the open sub-step of branch
	inputs map[string]ir.Pos
	loose  []source.Line // ## headings that look like a step but are not one
	late   []source.Line // # headings after the first ## section
	sawH2  bool
}

func (ps *parser) run(lines []source.Line) {
	var fence source.Fence
	for _, l := range lines {
		if fence.Next(l.Text) {
			ps.add(l.Text)
			continue
		}
		level, text := source.Heading(l.Text)
		switch {
		case level == 1 && !ps.sawH2 && !ps.p.Title.Pos.IsSet():
			ps.p.Title = ir.String{Value: text, Pos: l.Indent()}
			ps.open(description)
		case level == 1 && ps.sawH2:
			ps.late = append(ps.late, l)
			ps.line(l)
		case level == 2:
			ps.sawH2 = true
			ps.heading(l, text)
		case level == 3 && ps.branch != nil && subStepHeading().MatchString(text):
			ps.subStep(l, text)
		default:
			ps.line(l)
		}
	}
	ps.close()
	if !ps.p.Title.Pos.IsSet() {
		hint := titleHint
		if len(ps.late) > 0 {
			hint = fmt.Sprintf("the heading on line %d comes after a ## section; move it to the top", ps.late[0].No)
		}
		ps.r.Errorf(ir.Pos{Line: 1, Col: 1}, hint, "the playbook has no title")
	}
	if len(ps.p.Steps) == 0 {
		hint := stepHint
		if len(ps.loose) > 0 {
			hint = fmt.Sprintf("line %d reads %q; a step heading is written exactly `## STEP 1: Title`", ps.loose[0].No, strings.TrimSpace(ps.loose[0].Text))
		}
		ps.r.Errorf(ir.Pos{Line: 1, Col: 1}, hint, "the playbook has no step")
	}
}

// heading opens the ## section text names.
func (ps *parser) heading(l source.Line, text string) {
	ps.close()
	upper := strings.ToUpper(text)
	switch {
	case upper == "SYSTEM" || upper == "SYSTEM PROMPT":
		ps.open(system)
		ps.p.System = ir.String{Pos: l.Indent()}
	case upper == "INPUTS":
		ps.open(inputs)
		ps.p.InputsPos = l.Indent()
	case upper == "ARTIFACTS" || upper == "OUTPUT":
		ps.open(artifacts)
	case stepHeading().MatchString(text):
		m := stepHeading().FindStringSubmatch(text)
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = -1 // too many digits: reported as out of sequence
		}
		ps.cur = &Step{Number: n, Label: m[1], Title: ir.String{Value: strings.TrimSpace(m[2]), Pos: l.Indent()}, Pos: l.Indent()}
		ps.p.Steps = append(ps.p.Steps, ps.cur)
		ps.open(step)
	default:
		if looseStep().MatchString(text) {
			ps.loose = append(ps.loose, l)
		}
		ps.open(skipped)
	}
}

func (ps *parser) subStep(l source.Line, text string) {
	ps.flushText()
	m := subStepHeading().FindStringSubmatch(text)
	n, err := strconv.Atoi(m[1])
	if err != nil {
		n = -1
	}
	ps.sub = &Step{Number: n, Label: m[1] + m[2], Title: ir.String{Value: strings.TrimSpace(m[3]), Pos: l.Indent()}, Pos: l.Indent()}
	ps.branch.Steps = append(ps.branch.Steps, ps.sub)
}

func (ps *parser) open(s section) { ps.sec, ps.text = s, nil }

func (ps *parser) add(line string) {
	if ps.sec != skipped && ps.sec != preamble {
		ps.text = append(ps.text, line)
	}
}

// line handles a line that is not a heading.
func (ps *parser) line(l source.Line) {
	switch ps.sec {
	case inputs:
		ps.input(l)
	case artifacts:
		if m := artifactType().FindStringSubmatch(strings.TrimSpace(l.Text)); m != nil && ps.p.Artifact == nil {
			at := strings.Index(l.Text, m[1])
			ps.p.Artifact = &ir.String{Value: m[1], Pos: l.Pos(at)}
		}
	case step:
		ps.stepLine(l)
	default:
		ps.add(l.Text)
	}
}

// target is the step directives of the current line apply to: the open sub-step, or the step.
func (ps *parser) target() *Step {
	if ps.sub != nil {
		return ps.sub
	}
	return ps.cur
}

func (ps *parser) stepLine(l source.Line) {
	t := strings.TrimSpace(l.Text)
	if strings.HasPrefix(t, "```") {
		if m := ifMarker().FindStringSubmatch(t); m != nil {
			if m[1] == "if" || ps.branch != nil {
				ps.flushText()
				varAt := strings.Index(l.Text, m[2])
				ps.branch = &Branch{Pos: l.Indent(), Kind: m[1], Var: ir.String{Value: m[2], Pos: l.Pos(varAt)}, Op: m[3], Value: m[4]}
				ps.sub = nil
				ps.cur.Branches = append(ps.cur.Branches, ps.branch)
				return
			}
		}
		switch t {
		case "```else```":
			if ps.branch != nil {
				ps.flushText()
				ps.branch = &Branch{Pos: l.Indent(), Kind: "else"}
				ps.sub = nil
				ps.cur.Branches = append(ps.cur.Branches, ps.branch)
				return
			}
		case "```endif```":
			ps.flushText()
			ps.branch, ps.sub = nil, nil
			return
		}
	}
	if strings.HasPrefix(t, "@") && ps.directive(l, t) {
		return
	}
	ps.add(l.Text)
}

// directive reads a directive line into the current step; false when t is not one.
func (ps *parser) directive(l source.Line, t string) bool {
	at := l.Indent()
	s := ps.target()
	if m := outputDir().FindStringSubmatch(t); m != nil {
		s.Output = &Output{Var: ir.String{Value: m[1], Pos: ir.Pos{Line: at.Line, Col: at.Col + len("@output(")}}, Extract: m[4], Type: String}
		if m[2] != "" {
			ps.outputType(l, s.Output, m[2], m[3])
		}
		return true
	}
	if m := elicitDir().FindStringSubmatch(t); m != nil {
		typ := strings.ToLower(m[1])
		if typ != ElicitInput && typ != ElicitConfirm && typ != ElicitSelect {
			ps.r.Warnf(ir.Pos{Line: at.Line, Col: at.Col + len("@elicit(")}, ir.Suggest(m[1], []string{ElicitInput, ElicitConfirm, ElicitSelect}),
				"invalid elicit type %q; the directive is ignored", m[1])
			return true
		}
		e := &Elicit{Pos: at, Type: typ}
		for i, q := range quoted().FindAllStringSubmatch(m[2], -1) {
			v := strings.ReplaceAll(q[1], `\"`, `"`)
			if i == 0 {
				e.Prompt = v
			} else {
				e.Options = append(e.Options, v)
			}
		}
		s.Elicit = e
		return true
	}
	if m := promptDir().FindStringSubmatch(t); m != nil {
		s.PromptRef = &ir.String{Value: strings.TrimSpace(m[1]), Pos: at}
		return true
	}
	if m := toolDir().FindStringSubmatch(t); m != nil {
		parts := strings.SplitN(m[1], ",", 3)
		tool := &Tool{Pos: at, Connection: strings.Trim(strings.TrimSpace(parts[0]), `"`)}
		if len(parts) > 1 {
			tool.Name = strings.TrimSpace(parts[1])
		}
		if len(parts) > 2 {
			tool.Args = strings.TrimSpace(parts[2])
		}
		s.Tool = tool
		return true
	}
	return false
}

// outputType reads an @output's type (and an enum's options); an unknown type, or an enum
// without options, is an error at the type.
func (ps *parser) outputType(l source.Line, o *Output, typ, opts string) {
	o.TypePos = l.Pos(strings.Index(l.Text, typ))
	t := strings.ToLower(typ)
	if t != "json" {
		t = canonicalType(t)
	}
	if !strings.EqualFold(typ, t) && t == String && !strings.EqualFold(typ, "str") {
		ps.r.Errorf(o.TypePos, ir.Suggest(typ, OutputTypes), "unknown @output type %q", typ)
		return
	}
	o.Type = t
	if t != Enum {
		if opts != "" {
			ps.r.Errorf(o.TypePos, "only an enum lists values: @output(name: enum(a, b))", "the @output type %s takes no values", t)
		}
		return
	}
	for _, v := range strings.Split(opts, ",") {
		if v = strings.Trim(strings.TrimSpace(v), `"`); v != "" {
			o.Options = append(o.Options, v)
		}
	}
	if len(o.Options) == 0 {
		ps.r.Errorf(o.TypePos, "list its values: @output(name: enum(a, b))", "the enum @output %q lists no values", o.Var.Value)
	}
}

// input reads one line of ## INPUTS: a list item is an input, other text is commentary.
func (ps *parser) input(l source.Line) {
	if !listItem().MatchString(l.Text) {
		return
	}
	m := inputLine().FindStringSubmatch(strings.TrimSpace(l.Text))
	if m == nil {
		ps.r.Warnf(l.Indent(), "write an input as - `name` (type): description, - `name` (type: default): description or - `name` (enum: a, b): description",
			"malformed input line; it is ignored")
		return
	}
	in := &Input{Name: ir.String{Value: m[1], Pos: l.Pos(strings.Index(l.Text, "`") + 1)}, Description: strings.TrimSpace(m[3]), Required: true}
	spec := m[2]
	typ, rest, hasRest := strings.Cut(spec, ":")
	in.TypeAs = strings.TrimSpace(typ)
	in.Type = canonicalType(in.TypeAs)
	if in.Type == Enum {
		for _, o := range strings.Split(rest, ",") {
			if o = strings.TrimSpace(o); o != "" {
				in.Options = append(in.Options, o)
			}
		}
		if len(in.Options) == 0 {
			ps.r.Warnf(l.Indent(), "list the options: - `name` (enum: a, b): description", "malformed input line: enum input %q lists no options; it is ignored", in.Name.Value)
			return
		}
	} else if hasRest {
		in.Default, in.Required = strings.TrimSpace(rest), false
	}
	if first, dup := ps.inputs[in.Name.Value]; dup {
		ps.r.Errorf(in.Name.Pos, fmt.Sprintf("rename one; the first is on line %d", first.Line), "duplicate input %q", in.Name.Value)
		return
	}
	ps.inputs[in.Name.Value] = in.Name.Pos
	ps.p.Inputs = append(ps.p.Inputs, in)
}

func canonicalType(t string) string {
	switch strings.ToLower(t) {
	case "text":
		return Text
	case "number", "num", "int", "float":
		return Number
	case "boolean", "bool":
		return Boolean
	case "enum", "select", "choice":
		return Enum
	}
	return String
}

// flushText stores the text gathered so far where it belongs: the open sub-step, branch or step.
func (ps *parser) flushText() {
	text := strings.TrimSpace(strings.Join(ps.text, "\n"))
	ps.text = nil
	if text == "" {
		return
	}
	switch {
	case ps.sub != nil:
		ps.sub.Prompt = join(ps.sub.Prompt, text)
	case ps.branch != nil:
		ps.branch.Prompt = join(ps.branch.Prompt, text)
	case ps.cur != nil:
		ps.cur.Prompt = join(ps.cur.Prompt, text)
	}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

// close ends the open section, storing its text.
func (ps *parser) close() {
	switch ps.sec {
	case description:
		ps.p.Description = strings.TrimSpace(strings.Join(ps.text, "\n"))
	case system:
		ps.p.System.Value = strings.TrimSpace(strings.Join(ps.text, "\n"))
	case step:
		ps.flushText()
		ps.cur, ps.branch, ps.sub = nil, nil, nil
	}
	ps.sec, ps.text = preamble, nil
}
