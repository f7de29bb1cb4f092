package ir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillFolderWithoutSkillMD: a bare behavior whose skills/NAME folder lacks its SKILL.md
// says what is missing, and never suggests the name that was given ("did you mean "w"?"); a
// near name is still suggested when the folder is not there.
func TestSkillFolderWithoutSkillMD(t *testing.T) {
	const src = "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  w:\n    behavior: %s\n    triggers: [{ dispatch: true }]\n"
	cases := []struct {
		behavior string
		files    map[string]string
		dirs     []string
		want     string
	}{
		{"w", map[string]string{"skills/w/README.md": "x\n"}, nil,
			`ir.yml:5:15: actor "w": behavior "w" names the skill folder skills/w, but skills/w/SKILL.md does not exist (a skill folder holds its instructions in SKILL.md: create skills/w/SKILL.md)`},
		{"w", nil, []string{"skills/w"},
			`behavior "w" names the skill folder skills/w, but skills/w/SKILL.md does not exist`},
		{"w", nil, []string{"skills/w/SKILL.md"},
			`behavior "w" names the skill folder skills/w, but skills/w/SKILL.md is not a regular file (a skill folder holds its instructions in SKILL.md: make a regular file of skills/w/SKILL.md)`},
		{"helo", map[string]string{"skills/hello/SKILL.md": "# hello\n"}, nil,
			`behavior "helo" does not exist: looked for skills/helo/SKILL.md, helo/SKILL.md, helo (did you mean "hello"?)`},
		{"hello", map[string]string{"skills/hello/notes.md": "x\n", "skills/hellos/SKILL.md": "# hellos\n"}, nil,
			`behavior "hello" names the skill folder skills/hello, but skills/hello/SKILL.md does not exist`},
		// SKILL.md in another case: said so, on a disk that ignores case too.
		{"w", map[string]string{"skills/w/skill.md": "# w\n"}, nil,
			`ir.yml:5:15: actor "w": behavior "w" names the skill folder skills/w, but skills/w/skill.md exists: the file must be named SKILL.md (rename it to skills/w/SKILL.md)`},
		{"skills/w", map[string]string{"skills/w/Skill.MD": "# w\n"}, nil,
			`behavior "skills/w" is a folder, but skills/w/Skill.MD exists: the file must be named SKILL.md (rename it to skills/w/SKILL.md)`},
	}
	for _, c := range cases {
		files := map[string]string{"ir.yml": strings.Replace(src, "%s", c.behavior, 1)}
		for k, v := range c.files {
			files[k] = v
		}
		dir := writeProfile(t, files)
		for _, d := range c.dirs {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		_, diags, err := Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := diags.String()
		if !strings.Contains(got, c.want) || strings.Contains(got, `did you mean "`+c.behavior+`"`) {
			t.Errorf("%s %v %v:\ngot  %s\nwant %s", c.behavior, c.files, c.dirs, got, c.want)
		}
	}
}
