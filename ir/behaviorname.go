package ir

import (
	"path"
	"strings"
)

// BehaviorName is a behavior's declared name, the one overlays target as skill/NAME: the name:
// of its markdown frontmatter when it has one, else the name of its skill folder (for a SKILL.md)
// or its file name without extension. file is the behavior file (slash-separated, any prefix),
// data its text (or its start: the frontmatter is at the top). declared says the name came from
// the frontmatter. It reads the name the way validate does, which warns when a SKILL.md's
// declared name and its folder differ.
func BehaviorName(file string, data []byte) (name string, declared bool) {
	if len(data) > maxHead {
		data = data[:maxHead]
	}
	if strings.EqualFold(path.Ext(file), ".md") {
		if n, _, ok := frontmatterName(data); ok && strings.TrimSpace(n) != "" {
			return n, true
		}
	}
	if path.Base(file) == SkillFile {
		if dir := path.Dir(file); dir != "." && dir != "/" {
			return path.Base(dir), false
		}
	}
	base := path.Base(file)
	return strings.TrimSuffix(base, path.Ext(base)), false
}
