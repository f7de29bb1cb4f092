//go:build unix

package modelfake_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func writeSkill(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, name, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "---\nname: "+name+"\ndescription: Probe skill "+name+" marker-"+name+"\n---\n\nBody of "+name+" BODYMARK-"+name+"\n")
}

// TestSkillFolders pins down which skill folders each CLI reads: a skill
// found there is listed to the model by name and description (its body is
// not sent; the model reads SKILL.md when it picks the skill), so a preset
// that wants the skill text in the prompt must also send it on stdin.
func TestSkillFolders(t *testing.T) {
	want := map[string][]string{
		"codex":  {"wscodex", "wsagents", "codexhome"}, // <ws>/.codex/skills, <ws>/.agents/skills, $CODEX_HOME/skills
		"claude": {"wsclaude", "homeclaude"},           // <ws>/.claude/skills, $HOME/.claude/skills
	}
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) { skillFolders(t, preset, want[preset]) })
	}
}

func skillFolders(t *testing.T, preset string, want []string) {
	program := agentclitest.Require(t, preset)
	work, home, chome := t.TempDir(), t.TempDir(), t.TempDir()
	writeSkill(t, filepath.Join(work, ".codex", "skills"), "wscodex")
	writeSkill(t, filepath.Join(work, ".agents", "skills"), "wsagents")
	writeSkill(t, filepath.Join(work, ".claude", "skills"), "wsclaude")
	writeSkill(t, filepath.Join(chome, "skills"), "codexhome")
	writeSkill(t, filepath.Join(home, ".claude", "skills"), "homeclaude")
	fake := modelfake.Start(modelfake.Turn{Text: "done"})
	if preset == "codex" {
		env := []string{"CODEX_HOME=" + chome, "HOME=" + home, "MODELFAKE_API_KEY=k"}
		runCLI(t, work, env, "go", codexArgv(program, fake.OpenAIBaseURL(), "danger-full-access")...)
	} else {
		runCLI(t, work, claudeEnv(home, fake.AnthropicBaseURL()), "go", claudeArgv(program)...)
	}
	fake.Close()
	if err := fake.Err(); err != nil || len(fake.Scripted()) == 0 {
		t.Fatalf("no scripted request (%v)", err)
	}
	body := string(fake.Scripted()[0].Body)
	for _, n := range []string{"wscodex", "wsagents", "wsclaude", "codexhome", "homeclaude"} {
		listed := strings.Contains(body, "marker-"+n)
		if listed != contains(want, n) {
			t.Errorf("%s: skill %s listed = %v, want %v", preset, n, listed, !listed)
		}
		if strings.Contains(body, "BODYMARK-"+n) {
			t.Errorf("%s: the body of skill %s was sent", preset, n)
		}
	}
}
