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

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/templates"
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
	launched, asked := false, false
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
		case strings.HasPrefix(cmd, "autonomy runner logs ID"):
			// The user waits until runner list shows the session waiting, then reads the token
			// off the command its log ends with.
			b.WriteString(`for i in $(seq 300); do autonomy runner list --all | grep -q "^$id .*\(paused\|failed\|done\)" && break; sleep 0.2; done` + "\n")
			b.WriteString(`T=$(autonomy runner logs "$id" | sed -n 's/.* --token \([^ ]*\) .*/\1/p' | tail -1)` + "\n")
		case strings.HasPrefix(cmd, "autonomy runner list") && strings.Contains(comment, "WAITING FOR"):
			// The session asks a person: the user waits until runner list shows the ask waiting
			// for them, and reads its token from the file the comment names.
			m := regexp.MustCompile(`WAITING FOR "(\S+) \(a person\)`).FindStringSubmatch(comment)
			file := regexp.MustCompile(`\S*ID\S*\.token`).FindString(comment)
			if m == nil || file == "" {
				t.Fatalf("the step that shows the ask names no person or token file: %s", step)
			}
			fmt.Fprintf(&b, "for i in $(seq 300); do ask=$(%s | awk '$4 == \"running\" && /%s \\(a person\\)/ {print $1; exit}'); [ -n \"$ask\" ] && break; sleep 0.2; done\n", cmd, m[1])
			fmt.Fprintf(&b, "T=$(cat %s)\n", strings.Replace(file, "ID", `"$ask"`, 1))
			asked = true
		case strings.HasPrefix(cmd, "autonomy runner update ID --token T "):
			ask := ` "$id" `
			if asked {
				ask = ` "$ask" `
			}
			b.WriteString(strings.NewReplacer(" ID ", ask, " T ", ` "$T" `).Replace(cmd) + "\n")
		default:
			b.WriteString(cmd + "\n")
		}
	}
	if !launched {
		t.Fatalf("init's next steps launch nothing:\n%s", next)
	}
	b.WriteString("autonomy runner logs -f \"$id\" >/dev/null\nautonomy runner get \"$id\"\n")
	if asked {
		b.WriteString("echo \"the ask:\"\nautonomy runner get \"$ask\"\n")
	}
	b.WriteString(stopBackground)
	return b.String()
}

// TestInitNextStepsEndDone runs what `autonomy init` tells a new user to run next, for the local
// target of every template, as printed, with the pinned codex (a template's agents run with the
// model codex picks when the profile names none: for its default, code mode): the trial session
// ends as the template's first trial should, done where an agent runs (the scripted model's
// default answer is a result of the default contract, saying that nothing was done), never
// failed on an answer that is no result.
func TestInitNextStepsEndDone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real codex against the scripted model")
	}
	codex := agentclitest.Require(t, "codex")
	for _, template := range templates.Names() {
		t.Run(template, func(t *testing.T) {
			work := t.TempDir()
			// A repository just made, with no commit, as a newcomer's: the steps make the first
			// where the trial reads the history (release-gate's first step lists the commits).
			if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			printed := runAsNewUser(t, codex, work, "autonomy init --template "+template+" --target local")
			out := runAsNewUser(t, codex, work, initSteps(t, printed)+"git tag\n")
			if !regexp.MustCompile(`(?m)^status:\s+done$`).MatchString(out) {
				t.Fatalf("the session of init's next steps did not end done:\n%s", out)
			}
			trial := templates.TrialOf(template, "")
			switch {
			case template == "release-gate":
				// Approved, it tags the release with its playbook's default version.
				if !strings.HasSuffix(strings.TrimSpace(out), "\nv0.0.0-dev") {
					t.Errorf("release-gate's trial tagged no v0.0.0-dev:\n%s", out)
				}
			case trial.Person != "":
				// The agent asked the person, and the person's answer resolved the ask.
				_, ask, _ := strings.Cut(out, "\nthe ask:\n")
				if !regexp.MustCompile(`(?m)^status:\s+done$`).MatchString(ask) || !strings.Contains(ask, "read request 1") ||
					!strings.Contains(ask, "actor:     "+trial.Person) || !strings.Contains(ask, "origin:    session:") {
					t.Errorf("the trial's ask to %s was not answered:\n%s", trial.Person, out)
				}
			case trial.Answer != "":
				if !strings.Contains(out, "answered") {
					t.Errorf("the trial's session was never answered:\n%s", out)
				}
			case !strings.Contains(out, "nothing was done"):
				t.Errorf("the session of init's next steps did not say nothing was done:\n%s", out)
			}
		})
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
