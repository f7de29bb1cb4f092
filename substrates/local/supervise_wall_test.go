//go:build linux

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A script session that runs `autonomy runner supervise` on another session in flight, with a
// PATH of its own, would run that session's command again (its own `sleep` first on PATH) and
// stop its group; it is refused, as a process of a session and as a second supervisor.
var superviseWallFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: scripts/lead.sh
    triggers: [{ dispatch: true }]
  orch:
    behavior: scripts/wait.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  boss:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
	"scripts/lead.sh": `#!/bin/sh
out="$AUTONOMY_DIR/out"
mkdir -p "$AUTONOMY_DIR/evil"
printf '#!/bin/sh\necho evil >> "%s"\nexec /bin/sleep "$@"\n' "$out" > "$AUTONOMY_DIR/evil/sleep"
chmod +x "$AUTONOMY_DIR/evil/sleep"
env -u AUTONOMY_SESSION PATH="$AUTONOMY_DIR/evil:$PATH" autonomy runner supervise "$(cat "$AUTONOMY_DIR/orch")" >> "$out" 2>&1
echo "rc=$?" >> "$out"
` + scriptDone,
	"scripts/wait.sh": "#!/bin/sh\nwhile [ ! -e \"$AUTONOMY_DIR/out-done\" ]; do sleep 0.05; done\n" + scriptDone,
	"scripts/noop.sh": "#!/bin/sh\ntrue\n" + scriptDone,
}}

func TestSuperviseRefusedInsideASession(t *testing.T) {
	dir := installFleet(t, superviseWallFleet, false)
	r := newRunner(t, dir, Options{Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	orch := launch(t, r, LaunchRequest{Actor: "orch"})
	os.WriteFile(filepath.Join(dir, "orch"), []byte(orch.ID), 0o644)
	waitFor(t, r, orch.ID, func(s store.Session) bool { return s.PID > 0 })
	lead := launch(t, r, LaunchRequest{Actor: "lead"})
	waitEnded(t, r, lead.ID)
	out := readFile(t, filepath.Join(dir, "out"))
	if s, _, _ := r.Store.Get(t.Context(), orch.ID); s.Status.Ended() {
		t.Errorf("orch ended (%s: %s) while lead supervised it\n%s", s.Status, s.Reason, out)
	}
	os.WriteFile(filepath.Join(dir, "out-done"), nil, 0o644)
	if got := waitEnded(t, r, orch.ID); got.Status != ir.Done {
		t.Errorf("orch ended %s: %s", got.Status, got.Reason)
	}
	r.Wait()
	if !strings.Contains(out, "this process runs inside session "+lead.ID) || !strings.Contains(out, "rc=1") || strings.Contains(out, "evil") {
		t.Errorf("runner supervise from inside a session was not refused:\n%s", out)
	}
}

// A second supervisor of a session whose supervisor is alive is refused, even from outside
// every session.
func TestSuperviseRefusedWhileItsSupervisorLives(t *testing.T) {
	dir := installFleet(t, superviseWallFleet, false)
	r := newRunner(t, dir, Options{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	orch := launch(t, r, LaunchRequest{Actor: "orch"})
	t.Cleanup(func() { os.WriteFile(filepath.Join(dir, "out-done"), nil, 0o644); waitEnded(t, r, orch.ID) })
	s := waitFor(t, r, orch.ID, func(s store.Session) bool { return s.PID > 0 })
	if s.SupervisorPID != os.Getpid() {
		t.Fatalf("supervisor %d, want this test's process %d", s.SupervisorPID, os.Getpid())
	}
	// This test's process is orch's supervisor: the recorded one is made another live process
	// (pid 1) to start a second.
	if _, _, err := r.Store.Modify(t.Context(), orch.ID, nil, func(m *store.Session) {
		m.SupervisorPID = 1
		m.SupervisorStart, _ = proc.StartTime(1)
	}); err != nil {
		t.Fatal(err)
	}
	second := newRunner(t, dir, Options{Detach: true})
	err := second.Supervise(t.Context(), orch.ID)
	if err == nil || !strings.Contains(err.Error(), "is alive") {
		t.Fatalf("second supervisor: %v, want refused", err)
	}
}
