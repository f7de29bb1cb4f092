package source

import (
	"bytes"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// Line is one line of a file without its line ending, and its 1-based number.
type Line struct {
	No   int
	Text string
}

// Pos is the position of byte offset col0 (0-based) of the line.
func (l Line) Pos(col0 int) ir.Pos { return ir.Pos{Line: l.No, Col: col0 + 1} }

// Indent is the position of the line's first non-blank byte.
func (l Line) Indent() ir.Pos {
	return l.Pos(len(l.Text) - len(strings.TrimLeft(l.Text, " \t")))
}

// Lines splits data into lines, dropping "\n" and a "\r" before it.
func Lines(data []byte) []Line {
	n := bytes.Count(data, []byte("\n")) + 1
	out := make([]Line, 0, n)
	for i := 1; ; i++ {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			if len(data) > 0 {
				out = append(out, Line{i, strings.TrimSuffix(string(data), "\r")})
			}
			return out
		}
		out = append(out, Line{i, strings.TrimSuffix(string(data[:end]), "\r")})
		data = data[end+1:]
	}
}

// Fence tracks fenced code blocks (``` or ~~~) while a parser walks lines top to bottom, so a
// heading or a directive inside a code sample is read as text. A line that opens and closes a fence
// on itself (```if x == "y"```) is a marker, not a fence.
type Fence struct{ marker string }

// Next reports whether line is inside a fenced block or is a fence line itself.
func (f *Fence) Next(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return f.marker != ""
	}
	if f.marker != "" {
		if strings.HasPrefix(t, f.marker) && strings.TrimSpace(strings.TrimLeft(t, f.marker[:1])) == "" {
			f.marker = ""
		}
		return true
	}
	for _, m := range []string{"```", "~~~"} {
		if !strings.HasPrefix(t, m) {
			continue
		}
		rest := strings.TrimRight(t, " ")
		if len(rest) > 2*len(m) && strings.HasSuffix(rest, m) && m == "```" {
			return false // a one-line marker such as ```if x == "y"```
		}
		n := len(t) - len(strings.TrimLeft(t, m[:1]))
		f.marker = strings.Repeat(m[:1], n)
		return true
	}
	return false
}

// Heading splits a markdown ATX heading into its level and its text; level 0 means not a heading.
func Heading(line string) (level int, text string) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(line) && line[n] != ' ' && line[n] != '\t') {
		return 0, ""
	}
	text = strings.TrimSpace(line[n:])
	// A closing sequence of #s is not part of the text.
	if t := strings.TrimRight(text, "#"); t != text && (t == "" || strings.HasSuffix(t, " ")) {
		text = strings.TrimSpace(t)
	}
	return n, text
}
