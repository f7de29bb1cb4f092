//go:build linux

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/autonomyhq/autonomy/ir"
)

// A script session reads its ancestors' /proc/PID/environ: its supervisor held the runner's whole
// environment, GH_TOKEN among it, which the session's own leaves out. The supervisor now gets it
// through a pipe; its environment holds the allowlist alone. What the profile lists in env still
// reaches the session.
var environWallFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  snoop:
    behavior: scripts/snoop.sh
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      env: [LISTED_TOKEN]
`, files: map[string]string{
	"scripts/snoop.sh": `#!/bin/sh
out="$AUTONOMY_DIR/out"
echo "own LISTED_TOKEN=$LISTED_TOKEN" >> "$out"
p=$PPID
while [ "$p" -gt 1 ]; do
  tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -a 'TOKEN=' | sed "s/^/pid $p: /" >> "$out"
  p=$(awk '{print $4}' /proc/$p/stat)
done
` + scriptDone,
}}

func TestSupervisorEnvironHoldsNoSecret(t *testing.T) {
	dir := installFleet(t, environWallFleet, false)
	r := newRunner(t, dir, Options{Detach: true, Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(),
		"GH_TOKEN=ghp_operator_secret", "LISTED_TOKEN=listed_secret"}})
	s := launch(t, r, LaunchRequest{Actor: "snoop"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("snoop ended %s: %s", got.Status, got.Reason)
	}
	out := readFile(t, filepath.Join(dir, "out"))
	if strings.Contains(out, "ghp_operator_secret") || strings.Contains(out, "pid ") {
		t.Errorf("the session read a token in an ancestor's environment:\n%s", out)
	}
	if !strings.Contains(out, "own LISTED_TOKEN=listed_secret") {
		t.Errorf("the session lacks the token its profile lists:\n%s", out)
	}
}

// A descriptor the launching process inherited without close-on-exec (a shell's 7>file) reached
// the supervisor and, from it, the session's process, which could write to the file through it.
// The supervisor now marks what it inherited close-on-exec (proc.SealInherited).
var fdsFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  fds:
    behavior: scripts/fds.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
	"scripts/fds.sh": `#!/bin/sh
for f in /proc/$$/fd/*; do readlink "$f"; done > "$AUTONOMY_DIR/out"
` + scriptDone,
}}

func TestSessionInheritsNoLauncherDescriptor(t *testing.T) {
	dir := installFleet(t, fdsFleet, false)
	marker := filepath.Join(t.TempDir(), "launcher-secret-file")
	f, err := os.Create(marker)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil { // inherited across exec, as a shell's
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{Detach: true, Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	s := launch(t, r, LaunchRequest{Actor: "fds"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("fds ended %s: %s", got.Status, got.Reason)
	}
	out := readFile(t, filepath.Join(dir, "out"))
	if !strings.Contains(out, "/dev/null") && !strings.Contains(out, "pipe:") {
		t.Fatalf("the session listed no descriptor at all:\n%s", out)
	}
	if strings.Contains(out, marker) {
		t.Errorf("the session holds the launcher's inherited descriptor of %s:\n%s", marker, out)
	}
}
