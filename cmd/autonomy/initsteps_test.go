//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli"
)

// initSteps turns the next steps `autonomy init` printed (the indented lines after "Next, for
// TARGET:") into a script of a new user's commands: each as printed, the one meant for a second
// terminal in the background (inBackground), the session's id kept from the launch, and at the
// end the session followed to its end and shown.
func initSteps(t *testing.T, printed string) string {
	t.Helper()
	_, next, ok := strings.Cut(printed, "\nNext, for ")
	if !ok {
		t.Fatalf("init printed no next steps:\n%s", printed)
	}
	var b strings.Builder
	b.WriteString(scriptHead)
	launched := false
	for _, line := range strings.Split(next, "\n")[1:] {
		step, ok := strings.CutPrefix(line, "  ")
		if !ok {
			break
		}
		cmd, comment, _ := strings.Cut(step, "   # ")
		switch {
		case strings.Contains(comment, "second terminal"):
			inBackground(&b, cmd)
		case strings.HasPrefix(cmd, "autonomy runner launch "):
			fmt.Fprintf(&b, "id=$(%s)\n", cmd)
			launched = true
		default:
			b.WriteString(cmd + "\n")
		}
	}
	if !launched {
		t.Fatalf("init's next steps launch nothing:\n%s", next)
	}
	b.WriteString("autonomy runner logs -f \"$id\" >/dev/null\nautonomy runner get \"$id\"\n" + stopBackground)
	return b.String()
}

// TestInitNextStepsEndDone runs what `autonomy init` tells a new user to run next, for the local
// target of each template with an agent to launch, as printed, with the pinned codex: the trial
// session ends done (the scripted model's default answer is a result of the default contract,
// saying that nothing was done), not failed on an answer that is no result.
func TestInitNextStepsEndDone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real codex against the scripted model")
	}
	codex := agentcli.Require(t, "codex")
	work := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	printed := runAsNewUser(t, codex, work, "autonomy init --template hello --target local")
	out := runAsNewUser(t, codex, work, initSteps(t, printed))
	if !regexp.MustCompile(`(?m)^status:\s+done$`).MatchString(out) || !strings.Contains(out, "nothing was done") {
		t.Errorf("the session of init's next steps did not end done, saying nothing was done:\n%s", out)
	}
}

// TestInitDocumentStepsWriteTheDocuments runs, as a new user would, the first steps `autonomy
// init --template sdlc` prints (its profile names governing documents), then each target's
// steps up to its compile, with an editor that writes what it opens: the documents are written
// and committed, and neither compile nor check warns that one is missing.
func TestInitDocumentStepsWriteTheDocuments(t *testing.T) {
	work := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	editor := filepath.Join(t.TempDir(), "editor")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\necho '# written in the editor' > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	printed := runAsNewUser(t, "", work, "autonomy init --template sdlc")
	_, first, ok := strings.Cut(printed, "\nFirst, ")
	if !ok {
		t.Fatalf("init printed no first steps for sdlc's documents:\n%s", printed)
	}
	script := scriptHead + "export EDITOR=" + editor + "\n" + indented(first)
	for _, target := range []string{"gh-actions", "local"} {
		_, next, ok := strings.Cut(printed, "\nNext, for "+target+":")
		if !ok {
			t.Fatalf("no next steps for %s:\n%s", target, printed)
		}
		for _, step := range strings.Split(indented(next), "\n") {
			script += step + "\n"
			if strings.HasPrefix(step, "autonomy compile ") {
				break
			}
		}
		script += "autonomy check autonomy --target " + target + " --dir .\n"
	}
	out := runAsNewUser(t, "", work, script+"git log --format=%s -- docs\n")
	if strings.Contains(out, "documents.roles") || !strings.Contains(out, "\nthe governing documents of the fleet\n") {
		t.Errorf("the documents are missing or not committed:\n%s", out)
	}
	for _, doc := range []string{"VISION", "CONSTITUTION", "ROADMAP"} {
		if data, err := os.ReadFile(filepath.Join(work, "docs", doc+".md")); err != nil || string(data) != "# written in the editor\n" {
			t.Errorf("docs/%s.md: %q, %v", doc, data, err)
		}
	}
}

// indented is the block of indented lines text starts with, after its heading line, each
// without its indent.
func indented(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n")[1:] {
		step, ok := strings.CutPrefix(line, "  ")
		if !ok {
			break
		}
		b.WriteString(step + "\n")
	}
	return b.String()
}
