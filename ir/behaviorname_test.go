package ir

import "testing"

func TestBehaviorName(t *testing.T) {
	for _, c := range []struct {
		file, data, want string
		declared         bool
	}{
		{"skills/review/SKILL.md", "# review\n", "review", false},
		{".autonomy/skills/review/SKILL.md", "---\nname: code-review\ndescription: x\n---\n# r\n", "code-review", true},
		{"skills/review/SKILL.md", "---\nname: review\n---\n", "review", true},
		{"skills/review/SKILL.md", "---\nname: \"\"\n---\n", "review", false},
		{"skills/review/SKILL.md", "---\nname: [a, b]\n---\n", "review", false},
		{"skills/review/SKILL.md", "no frontmatter\n---\nname: other\n---\n", "review", false},
		{"playbooks/deploy.md", "---\nname: ship-it\n---\n", "ship-it", true},
		{"playbooks/deploy.md", "# deploy\n", "deploy", false},
		{"scripts/tidy.sh", "#!/bin/sh\n---\nname: x\n", "tidy", false},
		{"SKILL.md", "# root\n", "SKILL", false},
	} {
		got, declared := BehaviorName(c.file, []byte(c.data))
		if got != c.want || declared != c.declared {
			t.Errorf("BehaviorName(%q, %q) = %q, %v; want %q, %v", c.file, c.data, got, declared, c.want, c.declared)
		}
	}
}
