package workflow

import (
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// placeInBlock is place for a block scalar (| or >), whose value is written on the lines after
// its indicator: it walks the block's lines against the value, each line's text (its indentation
// stripped) being the next stretch of the value after the line break or folding space between
// them, and returns the line and column of byte offset off. When the lines do not read back as
// the value (an indentation indicator, a tab, a more-indented folded line), it names the first
// line of the block holding text, the value's text from off to the end of its line; failing
// that, the indicator.
func (w *Workflow) placeInBlock(val ir.String, text string, off int) ir.Pos {
	lines := w.blockLines(val.Pos)
	p := 0 // offset in the value of the next line's text
	for k, line := range lines {
		content := strings.TrimLeft(line, " ")
		if content == "" {
			continue
		}
		for p < len(val.Value) && (val.Value[p] == '\n' || val.Value[p] == ' ' && k > 0) {
			p++ // the line break, or the space a folded one became
		}
		if !strings.HasPrefix(val.Value[p:], content) {
			break
		}
		if off >= p && off < p+len(content) || off == p+len(content) && k == len(lines)-1 {
			return ir.Pos{Line: val.Pos.Line + 1 + k, Col: len(line) - len(content) + 1 + off - p}
		}
		p += len(content)
	}
	rest := val.Value[min(off, len(val.Value)):]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" {
		rest = text
	}
	for k, line := range lines {
		if i := strings.Index(line, rest); rest != "" && i >= 0 {
			return ir.Pos{Line: val.Pos.Line + 1 + k, Col: i + 1}
		}
	}
	return val.Pos
}

// blockLines are the lines of the block scalar whose indicator is at pos: those after it that
// are blank or indented more than the line of the indicator.
func (w *Workflow) blockLines(pos ir.Pos) []string {
	parent := indent(w.lines[pos.Line-1])
	var out []string
	for _, line := range w.lines[pos.Line:] {
		if strings.TrimSpace(line) != "" && indent(line) <= parent {
			break
		}
		out = append(out, line)
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return out
}

func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }
