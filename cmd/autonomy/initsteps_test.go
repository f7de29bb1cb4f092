//go:build unix

package main

import (
	"fmt"
	"os/exec"
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
