//go:build unix

package modelfake_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCodexWorkspaceWriteSandbox pins down what codex's workspace-write
// sandbox lets a command do in an isolated git worktree, which is what the
// local substrate gives an agent: it writes its workspace, commits once the
// worktree's git directories are added with --add-dir, and writes nothing
// else but its TMPDIR unless exclude_tmpdir_env_var; the network is closed
// unless sandbox_workspace_write.network_access=true. Its CODEX_HOME is under
// the temporary directory (as is the CLI when the agent cache is).
//
// Every case excludes /tmp itself: a writable root gets a read-only .git
// mount point, so codex with /tmp writable makes /tmp/.git for as long as it
// runs, and every other test then finds its temporary folders inside a git
// repository (compile's misplaced-install warning). The session's own TMPDIR
// stands for it: the same rule makes it writable.
func TestCodexWorkspaceWriteSandbox(t *testing.T) {
	program := agentclitest.Require(t, "codex")
	preset, _ := agent.Lookup("codex")
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "config", "user.email", "agent@example.com")
	git(t, repo, "config", "user.name", "agent")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	work := filepath.Join(t.TempDir(), "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "autonomy/develop/1", work)
	gitDir := git(t, work, "rev-parse", "--path-format=absolute", "--git-dir")
	commonDir := git(t, work, "rev-parse", "--path-format=absolute", "--git-common-dir")
	probe := modelfake.Start(modelfake.Turn{Text: "x"})
	defer probe.Close()

	cases := []struct {
		name       string
		extra      []string
		wantCommit bool
		wantNet    bool
		wantTmp    bool // outside.txt is in the session's TMPDIR, which workspace-write keeps writable by default
	}{
		{"plain", nil, false, false, true},
		{"git dirs added", []string{"--add-dir", commonDir, "--add-dir", gitDir}, true, false, true},
		{"network on", []string{"-c", "sandbox_workspace_write.network_access=true"}, false, true, true},
		{"tmp excluded", []string{"--add-dir", commonDir, "--add-dir", gitDir,
			"-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true"}, true, false, false},
	}
	_, err := os.Lstat("/tmp/.git")
	tmpGitBefore := err == nil
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(probe.Requests())
			// CODEX_HOME under TMPDIR, and TMPDIR of its own as the launchers give it
			// (agent.Preset.TempEnv): without, codex makes no codex-linux-sandbox for its
			// sandbox to execute and every command fails.
			home := t.TempDir()
			env, removeTmp, err := preset.TempEnv([]string{"CODEX_HOME=" + filepath.Join(home, ".codex"), "HOME=" + home,
				"TMPDIR=" + os.TempDir(), "MODELFAKE_API_KEY=sk-modelfake"})
			if err != nil {
				t.Fatal(err)
			}
			defer removeTmp()
			if err := os.Mkdir(filepath.Join(home, ".codex"), 0o700); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(agent.TempParent(env), "outside.txt")
			cmd := "echo hi > proof.txt && echo write-ok; " +
				"git add proof.txt && git commit -qm proof && echo commit-ok; " +
				"curl -sS -m 5 -o /dev/null " + probe.URL() + "/probe && echo net-ok; " +
				"touch " + outside + " && echo outside-ok; " +
				"if [ -e /tmp/.git ]; then echo slash-tmp-git; fi; true"
			fake := modelfake.Start(modelfake.Turn{Shell: cmd}, modelfake.Turn{Text: "done"})
			defer fake.Close()
			extra := append([]string{"-c", "sandbox_workspace_write.exclude_slash_tmp=true"}, c.extra...)
			run := runCLI(t, work, env, "probe the sandbox", codexArgv(program, fake.OpenAIBaseURL(), "workspace-write", extra...)...)
			if run.err != nil || fake.Err() != nil {
				t.Fatalf("codex: %v, server: %v\nstdout:\n%s\nstderr:\n%s", run.err, fake.Err(), run.stdout, run.stderr)
			}
			s := fake.Scripted()
			if len(s) != 2 || len(s[1].ToolOutputs) != 1 {
				t.Fatalf("want 2 scripted requests, the second with the tool output; got %d", len(s))
			}
			out := s[1].ToolOutputs[0]
			t.Logf("tool output:\n%s", out)
			if !strings.Contains(out, "write-ok") {
				t.Errorf("writing the workspace failed")
			}
			if got := strings.Contains(out, "commit-ok"); got != c.wantCommit {
				t.Errorf("commit succeeded = %v, want %v", got, c.wantCommit)
			}
			if got := strings.Contains(out, "net-ok") || len(probe.Requests()) > before; got != c.wantNet {
				t.Errorf("network reached = %v, want %v", got, c.wantNet)
			}
			if strings.Contains(out, "slash-tmp-git") && !tmpGitBefore {
				t.Errorf("/tmp/.git exists while codex runs: /tmp is a writable root of its sandbox, and every other test's temporary folder is inside a git repository meanwhile")
			}
			if got := strings.Contains(out, "outside-ok"); got != c.wantTmp {
				t.Errorf("writing %s outside the workspace succeeded = %v, want %v", outside, got, c.wantTmp)
			}
			os.Remove(outside)
			if c.wantCommit {
				if log := git(t, repo, "log", "--format=%s", "autonomy/develop/1"); !strings.HasPrefix(log, "proof") {
					t.Errorf("branch log = %q, want the agent's commit on top", log)
				}
				git(t, work, "reset", "-q", "--hard", "HEAD~1")
			}
			os.Remove(filepath.Join(work, "proof.txt"))
		})
	}
}
