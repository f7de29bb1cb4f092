package source

import (
	"bytes"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// Frontmatter is a file's leading YAML block between --- lines.
type Frontmatter struct {
	// Root is the YAML mapping, its positions those of the file; nil when the block is missing,
	// unreadable or not a mapping (reported).
	Root *yaml.Node
	// Pos is where the opening --- is; zero when the file has no frontmatter.
	Pos ir.Pos
	// Body is the lines after the closing --- (all lines when there is no frontmatter).
	Body []Line
}

// HasFrontmatter reports whether lines start with a --- line.
func HasFrontmatter(lines []Line) bool {
	return len(lines) > 0 && strings.TrimRight(strings.TrimPrefix(lines[0].Text, "\ufeff"), " \t") == "---"
}

// FrontmatterEnd is the index of the line closing the frontmatter lines open (--- or ...), or
// -1 when none does.
func FrontmatterEnd(lines []Line) int {
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i].Text, " \t"); t == "---" || t == "..." {
			return i
		}
	}
	return -1
}

// SplitFrontmatter reads the frontmatter of lines. A missing frontmatter is not reported (the
// caller knows whether its format needs one); an unclosed or malformed one is. example is the
// hint for a frontmatter that is not a mapping.
func SplitFrontmatter(r *Reporter, lines []Line, example string) Frontmatter {
	if !HasFrontmatter(lines) {
		return Frontmatter{Body: lines}
	}
	fm := Frontmatter{Pos: ir.Pos{Line: 1, Col: 1}}
	end := FrontmatterEnd(lines)
	if end < 0 {
		r.Errorf(fm.Pos, "close it with a line holding only ---", "the frontmatter opened here is never closed")
		return fm
	}
	fm.Body = lines[end+1:]
	// Blank lines in front of the YAML keep the parser's line numbers equal to the file's.
	var b bytes.Buffer
	b.WriteString("\n")
	for _, l := range lines[1:end] {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	fm.Root = ParseYAML(r, b.Bytes(), fm.Pos, "the frontmatter", example)
	return fm
}

// ParseYAML parses one YAML document that must be a mapping; what names it in messages. It never
// panics: a failure of the YAML library becomes a diagnostic.
func ParseYAML(r *Reporter, data []byte, at ir.Pos, what, example string) (root *yaml.Node) {
	defer func() {
		if v := recover(); v != nil {
			root = nil
			r.Errorf(at, "", "the YAML parser failed on %s: %v", what, v)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			r.Errorf(at, example, "%s is empty", what)
			return nil
		}
		r.YAMLError(data, err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		line := at.Line
		if err == nil && extra.Line > 0 {
			line = extra.Line
		}
		r.Errorf(ir.Pos{Line: line, Col: 1}, "remove the --- and what follows it", "%s holds more than one YAML document", what)
		return nil
	}
	if len(doc.Content) == 0 || IsNull(doc.Content[0]) {
		r.Errorf(at, example, "%s is empty", what)
		return nil
	}
	n := doc.Content[0]
	if n.Kind != yaml.MappingNode {
		r.Errorf(PosOf(n), example, "%s must be a mapping, not %s", what, Describe(n))
		return nil
	}
	return n
}
