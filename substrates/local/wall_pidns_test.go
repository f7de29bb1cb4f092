//go:build linux

package local

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A script (unsandboxed) that makes a user+pid namespace of its own: over its parent's /proc it
// would read the host's pid 1's ancestry for its own; with its own /proc it hides its ancestry
// and could claim any session. Neither makes it the operator or another session.
var pidnsWallFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: scripts/lead.sh
    capabilities: ["agent:launch@worker"]
    triggers: [{ dispatch: true }]
  orch:
    behavior: scripts/wait.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  boss:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
	"scripts/lead.sh": `#!/bin/sh
out="$AUTONOMY_DIR/out"
try() { echo "== $1" >> "$out"; shift; "$@" >> "$out" 2>&1; echo "rc=$?" >> "$out"; }
try host_proc unshare -Urpf env -u AUTONOMY_SESSION autonomy runner launch boss
try own_proc unshare -Urpf --mount-proc env -u AUTONOMY_SESSION autonomy runner launch boss
try forged unshare -Urpf --mount-proc env AUTONOMY_SESSION="$(cat "$AUTONOMY_DIR/orch")" autonomy runner launch boss
` + scriptDone,
	"scripts/wait.sh": "#!/bin/sh\nwhile [ ! -e \"$AUTONOMY_DIR/out-done\" ]; do sleep 0.05; done\n" + scriptDone,
	"scripts/noop.sh": "#!/bin/sh\ntrue\n" + scriptDone,
}}

func TestPidNamespaceDoesNotLeaveTheWall(t *testing.T) {
	dir := installFleet(t, pidnsWallFleet, false)
	r := newRunner(t, dir, Options{Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	orch := launch(t, r, LaunchRequest{Actor: "orch"})
	os.WriteFile(filepath.Join(dir, "orch"), []byte(orch.ID), 0o644)
	lead := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEnded(t, r, lead.ID); got.Status != ir.Done {
		t.Fatalf("lead ended %s: %s", got.Status, got.Reason)
	}
	os.WriteFile(filepath.Join(dir, "out-done"), nil, 0o644)
	waitEnded(t, r, orch.ID)
	r.Wait()
	out := readFile(t, filepath.Join(dir, "out"))
	all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
	for _, s := range all {
		if s.Actor == "boss" {
			t.Errorf("boss launched from a pid namespace of the script's own, origin %q\n%s", s.Origin, out)
		}
	}
	for _, want := range []string{
		"/proc/self is process",        // host_proc: /proc is not its namespace's
		"other than the runner's",      // own_proc: another namespace, no session named
		"which runs without a sandbox", // forged: orch has no sandbox to be in
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the script's output:\n%s", want, out)
		}
	}
	if strings.Count(out, "rc=1") != 3 {
		t.Errorf("want three refusals (exit 1):\n%s", out)
	}
}

// A shell that entered an older pid namespace (a rootless container's, nsenter) sees a pid 1
// older than every session, and none of their ancestry: it is in another namespace than the
// one the supervisors recorded, so it is not the operator while a session is in flight.
func TestOlderForeignPidNamespaceIsNotTheOperator(t *testing.T) {
	dir := installFleet(t, pidnsWallFleet, false)
	r := newRunner(t, dir, Options{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	orch := launch(t, r, LaunchRequest{Actor: "orch"})
	t.Cleanup(func() { os.WriteFile(filepath.Join(dir, "out-done"), nil, 0o644); waitEnded(t, r, orch.ID) })
	waitFor(t, r, orch.ID, func(s store.Session) bool { return s.PID > 0 })
	recorded := filepath.Join(dir, filepath.FromSlash(StateDir), pidNSFile)
	own, err := strconv.ParseUint(strings.TrimSpace(readFile(t, recorded)), 10, 64)
	if err != nil || own == 0 {
		t.Fatalf("the supervisor recorded no pid namespace: %v", err)
	}
	if _, err := New(dir, Options{Confine: true, Playbooks: r.opts.Playbooks}); err != nil {
		t.Fatalf("from the runner's own namespace: %v", err)
	}
	if err := os.WriteFile(recorded, []byte(strconv.FormatUint(own+1, 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(dir, Options{Confine: true, Playbooks: r.opts.Playbooks})
	var denied *DeniedError
	if !errors.As(err, &denied) || !strings.Contains(err.Error(), "other than the runner's") {
		t.Fatalf("from another namespace: %v, want denied", err)
	}
}
