package ir

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based line and column in a profile file. The zero Pos means "not present in the file".
type Pos struct {
	Line int `json:"line"`
	Col  int `json:"column"`
}

// IsSet reports whether p points into the file.
func (p Pos) IsSet() bool { return p.Line > 0 }

// Severity says whether a diagnostic fails validation.
type Severity string

// The two severities: errors fail validation, warnings are reported and do not.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Diagnostic is one problem found in a profile, positioned in its file.
type Diagnostic struct {
	File     string   `json:"file"`
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	// Message says what is wrong, and Hint how to fix it (valid values, a "did you mean", an example).
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// String renders the diagnostic as one line: file:line:col: [warning: ]message (hint).
func (d Diagnostic) String() string {
	var b strings.Builder
	line, col := d.Pos.Line, d.Pos.Col
	if line < 1 {
		line, col = 1, 1
	}
	fmt.Fprintf(&b, "%s:%d:%d: ", d.File, line, col)
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		b.WriteString(" (")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Diagnostics is a list of problems. Sort orders it by file, line, column and message and drops
// exact duplicates, so the output is the same whatever order the checks ran in.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors counts the errors.
func (ds Diagnostics) Errors() int {
	n := 0
	for _, d := range ds {
		if d.Severity == Error {
			n++
		}
	}
	return n
}

// Sort sorts the diagnostics in place and returns them without exact duplicates. Diagnostics that
// differ only by the actor they name, at one position, come from one value shared by several actors
// through a YAML alias: they are reported once, naming how many actors share it.
func (ds Diagnostics) Sort() Diagnostics {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		// Messages that differ only by the actor they name sort next to each other.
		if ma, mb := maskActor(a.Message), maskActor(b.Message); ma != mb {
			return ma < mb
		}
		if a.Message != b.Message {
			return a.Message < b.Message
		}
		return a.Severity < b.Severity
	})
	out := ds[:0]
	shared := 0
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		if n := len(out); n > 0 && sameButActor(out[n-1], d) {
			shared++
			continue
		}
		if shared > 0 {
			out[len(out)-1].Message = sharedBy(out[len(out)-1].Message, shared)
			shared = 0
		}
		out = append(out, d)
	}
	if shared > 0 {
		out[len(out)-1].Message = sharedBy(out[len(out)-1].Message, shared)
	}
	return out
}

// actorIn splits a message around the first `actor "name"` it holds: anywhere in it, e.g.
// `actor "a": unknown capability …` or `unknown key "x" in actor "a"`.
func actorIn(msg string) (before, name, after string, ok bool) {
	i := strings.Index(msg, `actor "`)
	if i < 0 {
		return "", "", msg, false
	}
	start := i + len(`actor "`)
	j := strings.IndexByte(msg[start:], '"')
	if j < 0 {
		return "", "", msg, false
	}
	return msg[:i], msg[start : start+j], msg[start+j+1:], true
}

// maskActor is the message with the actor's name removed.
func maskActor(msg string) string {
	before, _, after, ok := actorIn(msg)
	if !ok {
		return msg
	}
	return before + `actor ""` + after
}

func sameButActor(a, b Diagnostic) bool {
	if a.File != b.File || a.Pos != b.Pos || a.Severity != b.Severity || a.Hint != b.Hint {
		return false
	}
	ba, _, aa, okA := actorIn(a.Message)
	bb, _, ab, okB := actorIn(b.Message)
	return okA && okB && ba == bb && aa == ab
}

func sharedBy(msg string, more int) string {
	before, name, after, _ := actorIn(msg)
	return fmt.Sprintf("%sactor %q and %d more sharing this value%s", before, name, more, after)
}

// String renders every diagnostic on its own line.
func (ds Diagnostics) String() string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Error makes a non-empty Diagnostics usable as an error.
func (ds Diagnostics) Error() string { return strings.TrimSuffix(ds.String(), "\n") }

// reporter collects diagnostics for one file.
type reporter struct {
	file  string
	diags Diagnostics
}

func (r *reporter) errorf(p Pos, hint, format string, args ...any) {
	r.diags = append(r.diags, Diagnostic{File: r.file, Pos: p, Severity: Error, Message: fmt.Sprintf(format, args...), Hint: hint})
}

func (r *reporter) warnf(p Pos, hint, format string, args ...any) {
	r.diags = append(r.diags, Diagnostic{File: r.file, Pos: p, Severity: Warning, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// firstAt names where the first of two duplicates is, relative to the second: its line, or its
// column when both are on one line.
func firstAt(first, dup Pos) string {
	if first.Line == dup.Line {
		return fmt.Sprintf("column %d", first.Col)
	}
	return fmt.Sprintf("line %d", first.Line)
}
