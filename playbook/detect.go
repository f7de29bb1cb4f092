package playbook

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// Format is one of the four playbook formats.
type Format string

// The formats, and Unknown for a file that is none of them.
const (
	Capsule  Format = "capsule"
	Overlay  Format = "overlay"
	Steps    Format = "steps"
	Workflow Format = "workflow"
	Unknown  Format = ""
)

var (
	stepHeading     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^##\s+STEP\s+\d+:`) })
	workflowSteps   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^steps\s*:|"steps"\s*:`) })
	overlaySchema   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^schema\s*:\s*["']?playbooks/`) })
	capsuleTypeLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^type\s*:\s*["']?playbook["']?\s*(#.*)?$`) })
)

// Detect says which format a file is, from its name and content. sure is false for a guess: a
// markdown file with no sign of any format (read as a step playbook) or a YAML file without
// steps (read as a workflow). A directory walk skips guesses; a file named explicitly is read
// as the guess says.
//
//   - YAML frontmatter with schema: playbooks/… is an overlay;
//   - frontmatter with type: playbook, or any frontmatter in a *.playbook.md or *.pipeline.md
//     file, is a capsule playbook; so is a *.playbook.md file without ## STEP N: headings;
//   - markdown without frontmatter is a step playbook (sure when it has a ## STEP N: heading);
//   - .yml, .yaml and .json files are workflows (sure when they have a top-level steps key).
func Detect(name string, data []byte) (f Format, sure bool) {
	base := strings.ToLower(filepath.Base(name))
	switch base {
	case overlay.IndexFile, overlay.LogFile:
		return Unknown, false
	}
	switch filepath.Ext(base) {
	case ".yml", ".yaml", ".json":
		return Workflow, bytes.Contains(data, []byte("steps")) && workflowSteps().Match(data)
	case ".md", ".markdown":
	default:
		return Unknown, false
	}
	capsuleName := strings.HasSuffix(base, ".playbook.md") || strings.HasSuffix(base, ".pipeline.md")
	if fm, ok := frontmatter(data); ok {
		switch {
		case overlaySchema().Match(fm):
			return Overlay, true
		case capsuleTypeLine().Match(fm) || capsuleName:
			return Capsule, true
		}
		return Unknown, false
	}
	if bytes.Contains(data, []byte("STEP")) && stepHeading().Match(data) {
		return Steps, true
	}
	if capsuleName {
		return Capsule, true
	}
	return Steps, false
}

// frontmatter returns the text between a leading --- line and the next ---, if any.
func frontmatter(data []byte) ([]byte, bool) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(bytes.TrimRight(first, " \t\r")) != "---" {
		return nil, false
	}
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		if t := string(bytes.TrimRight(line, " \t\r")); t == "---" || t == "..." {
			return rest[:off], true
		}
		off += len(line) + 1
	}
	return rest, true
}
