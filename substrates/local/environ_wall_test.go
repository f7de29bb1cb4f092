//go:build linux

package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A script session reads its ancestors' /proc/PID/environ: its supervisor holds the runner's
// environment, GH_TOKEN among it, which the session's own environment leaves out. The supervisor
// is not dumpable: its environ reads as permission denied.
var environWallFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  snoop:
    behavior: scripts/snoop.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
	"scripts/snoop.sh": `#!/bin/sh
out="$AUTONOMY_DIR/out"
echo "own GH_TOKEN=${GH_TOKEN:-unset}" >> "$out"
p=$PPID
while [ "$p" -gt 1 ]; do
  if env=$(tr '\0' '\n' < /proc/$p/environ 2>/dev/null); then
    echo "$env" | grep '^GH_TOKEN=' | sed "s/^/pid $p: /" >> "$out"
  else
    echo "pid $p: unreadable" >> "$out"
  fi
  p=$(awk '{print $4}' /proc/$p/stat)
done
`,
}}

func TestSupervisorEnvironUnreadable(t *testing.T) {
	dir := installFleet(t, environWallFleet, false)
	r := newRunner(t, dir, Options{Detach: true, Exe: unprivileged(t, builtAutonomy(t)), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GH_TOKEN=ghp_operator_secret"}})
	s := launch(t, r, LaunchRequest{Actor: "snoop"})
	ended := waitEnded(t, r, s.ID)
	out := readFile(t, filepath.Join(dir, "out"))
	if strings.Contains(out, "ghp_operator_secret") {
		t.Errorf("the session read the runner's GH_TOKEN:\n%s", out)
	}
	if want := fmt.Sprintf("pid %d: unreadable", ended.SupervisorPID); !strings.Contains(out, want) {
		t.Errorf("the supervisor's environ was not denied (want %q):\n%s", want, out)
	}
}

// unprivileged is exe, run without any capability when this test runs as root (CAP_SYS_PTRACE
// reads any process, dumpable or not): the supervisor and its session are then what they are
// for a runner an ordinary user runs, the same user without privilege.
func unprivileged(t *testing.T, exe string) string {
	if os.Getuid() != 0 {
		return exe
	}
	w := filepath.Join(t.TempDir(), "autonomy-unprivileged")
	script := "#!/bin/sh\nexec setpriv --bounding-set=-all --inh-caps=-all --ambient-caps=-all --securebits=+noroot,+noroot_locked -- " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}
