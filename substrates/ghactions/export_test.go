package ghactions

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExportIgnoresTheAgentsGit runs the compiled "Export the commits" step, as the runner does,
// in a checkout whose git directory the agent rewrote: an fsmonitor, hooks (a hooksPath too),
// a clean filter named by .gitattributes, a signing program, a global config in its home. None
// of it runs; the bundle holds the agent's commit and its uncommitted file as written.
func TestExportIgnoresTheAgentsGit(t *testing.T) {
	_, steps := agentSteps(t, "      model: gpt-5-codex\n")
	script := steps["Export the commits"]["run"].(string)
	root := t.TempDir()
	ws, temp, home := filepath.Join(root, "ws"), filepath.Join(root, "temp"), filepath.Join(root, "home")
	for _, d := range []string{ws, temp, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, ws, "init", "--quiet")
	write(t, filepath.Join(ws, "a.txt"), "base\n", 0o644)
	gitRun(t, ws, "add", "-A")
	gitRun(t, ws, "commit", "--quiet", "-m", "base")
	base := gitRun(t, ws, "rev-parse", "HEAD")
	write(t, filepath.Join(ws, "a.txt"), "agent's commit\n", 0o644)
	gitRun(t, ws, "commit", "--quiet", "-am", "agent")
	// What the agent plants: each program leaves a mark where it ran.
	marks := filepath.Join(root, "marks")
	evil := filepath.Join(root, "evil")
	write(t, evil, "#!/bin/sh\necho \"$0 $*\" >> "+marks+"\ncat\n", 0o755)
	for _, hook := range []string{"pre-commit", "post-commit", "commit-msg", "prepare-commit-msg", "post-index-change", "reference-transaction"} {
		write(t, filepath.Join(ws, ".git", "hooks", hook), "#!/bin/sh\necho hook-"+hook+" >> "+marks+"\n", 0o755)
	}
	for _, kv := range [][2]string{
		{"core.fsmonitor", evil}, {"core.hooksPath", filepath.Join(ws, ".git", "hooks")},
		{"filter.x.clean", evil}, {"filter.x.required", "true"}, {"commit.gpgSign", "true"}, {"gpg.program", evil},
		{"core.pager", evil}, {"core.untrackedCache", "true"},
	} {
		gitRun(t, ws, "config", kv[0], kv[1])
	}
	write(t, filepath.Join(home, ".gitconfig"), "[core]\n\tfsmonitor = "+evil+"\n", 0o644)
	write(t, filepath.Join(ws, ".gitattributes"), "* filter=x\n", 0o644)
	write(t, filepath.Join(ws, "left.txt"), "uncommitted\n", 0o644)

	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "RUNNER_TEMP="+temp, "HOME="+home, "AUTONOMY_BASE="+base, "AUTONOMY_ACTOR=develop",
		"GIT_AUTHOR_NAME=bot", "GIT_AUTHOR_EMAIL=bot@example.com", "GIT_COMMITTER_NAME=bot", "GIT_COMMITTER_EMAIL=bot@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the export step: %v\n%s", err, out)
	}
	if data, err := os.ReadFile(marks); err == nil {
		t.Errorf("the agent's programs ran in the export step:\n%s", data)
	}
	clone := filepath.Join(root, "clone")
	gitRun(t, root, "init", "--quiet", clone)
	gitRun(t, clone, "fetch", "--quiet", ws) // the base, as the propose job has it
	gitRun(t, clone, "fetch", "--quiet", filepath.Join(temp, proposeArtifact, BundleFile), "+HEAD:refs/proposed")
	if got := gitRun(t, clone, "show", "refs/proposed:left.txt"); got != "uncommitted" {
		t.Errorf("left.txt in the bundle: %q", got)
	}
	if got := gitRun(t, clone, "show", "refs/proposed~1:a.txt"); got != "agent's commit" {
		t.Errorf("a.txt in the agent's commit: %q", got)
	}
	if log := gitRun(t, clone, "log", "--format=%s", base+"..refs/proposed"); log != "develop: changes left uncommitted\nagent" {
		t.Errorf("the bundle's commits:\n%s", log)
	}
}

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}
