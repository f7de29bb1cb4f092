package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A session's commits are the agent's own: the operator's commit.gpgSign (and tag.gpgSign) is
// not applied to them. A proxied session's jail hides the signing key, so every commit of every
// committing agent failed where the operator signs (attack26), and doctor said git was ready.
func TestASessionDoesNotSignWithTheOperatorsKey(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  job:
    behavior: scripts/job.sh
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
`, files: map[string]string{"scripts/job.sh": "#!/bin/sh\nset -e\necho hi > f\ngit add f\ngit commit -qm 'the agent' \ngit tag -m t t1\n" +
		"git log -1 --format=%G?%n%s > \"$AUTONOMY_DIR/committed\"\n" + scriptDone}}, true)
	home := t.TempDir()
	// A signing program that always fails: what a hidden key amounts to.
	gitconfig := "[user]\n\tname = Ada\n\temail = ada@example.com\n[commit]\n\tgpgSign = true\n[tag]\n\tgpgSign = true\n[gpg]\n\tprogram = /bin/false\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	op := exec.Command("git", "-C", dir, "commit", "--allow-empty", "-qm", "the operator's")
	op.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	if out, err := op.CombinedOutput(); err == nil || !strings.Contains(string(out), "gpg failed to sign") {
		t.Fatalf("the operator's own commit is signed (and here fails to be): %v\n%s", err, out)
	}
	r := newRunner(t, dir, Options{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + home}})
	if s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "job"}).ID); s.Status != ir.Done {
		t.Fatalf("the committing session ended %s: %s", s.Status, s.Reason)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "committed")); err != nil || string(data) != "N\nthe agent\n" {
		t.Fatalf("the session's commit: %q %v", data, err)
	}
}
