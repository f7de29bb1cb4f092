//go:build unix

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// wallTestFleet is a fleet for a hostile script: lead runs leadScript (holding leadCaps, when
// given); orch, which may launch anyone, waits until $AUTONOMY_DIR/out-done exists; boss and
// worker do nothing.
func wallTestFleet(leadCaps, leadScript string) fleet {
	caps := ""
	if leadCaps != "" {
		caps = "\n    capabilities: " + leadCaps
	}
	return fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: scripts/lead.sh` + caps + `
    triggers: [{ dispatch: true }]
  orch:
    behavior: scripts/wait.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
  boss:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
		"scripts/lead.sh": leadScript + scriptDone,
		"scripts/wait.sh": "#!/bin/sh\nwhile [ ! -e \"$AUTONOMY_DIR/out-done\" ]; do sleep 0.05; done\n" + scriptDone,
		"scripts/noop.sh": "#!/bin/sh\ntrue\n" + scriptDone,
	}}
}

// wallTries is the head of a lead script that tries things: try NAME COMMAND... appends
// "== NAME", the command's output and its exit status ("rc=N") to $AUTONOMY_DIR/out.
const wallTries = `#!/bin/sh
out="$AUTONOMY_DIR/out"
try() { echo "== $1" >> "$out"; shift; "$@" >> "$out" 2>&1; echo "rc=$?" >> "$out"; }
`

// runLeadBesideOrch launches orch, names it to lead in $AUTONOMY_DIR/orch, runs lead to its end
// (done), then lets orch end; it returns what lead wrote to $AUTONOMY_DIR/out.
func runLeadBesideOrch(t *testing.T, r *Runner, dir string) string {
	t.Helper()
	orch := launch(t, r, LaunchRequest{Actor: "orch"})
	if err := os.WriteFile(filepath.Join(dir, "orch"), []byte(orch.ID), 0o644); err != nil {
		t.Fatal(err)
	}
	lead := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEnded(t, r, lead.ID); got.Status != ir.Done {
		t.Fatalf("lead ended %s: %s", got.Status, got.Reason)
	}
	if err := os.WriteFile(filepath.Join(dir, "out-done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, r, orch.ID)
	return readFile(t, filepath.Join(dir, "out"))
}

// wallFleet: lead (agent:launch@worker) runs autonomy runner launch from its own process in
// every way a hostile script can: as itself, without AUTONOMY_SESSION, naming another session in
// flight (orch, which may launch anyone), and past its launch cap.
var wallFleet = wallTestFleet(`["agent:launch@worker"]`, wallTries+`try self autonomy runner launch boss
try unset env -u AUTONOMY_SESSION autonomy runner launch boss
try forged env AUTONOMY_SESSION="$(cat "$AUTONOMY_DIR/orch")" autonomy runner launch boss
try detached setsid sh -c 'env -u AUTONOMY_SESSION autonomy runner launch boss'
for i in 1 2 3 4 5 6; do try "worker$i" autonomy runner launch worker; done
`)

// A session's own processes cannot act as the operator or as another session, however they set
// their environment, and its launches count against the launch tool's cap.
func TestShellCannotLeaveItsSession(t *testing.T) {
	dir := installFleet(t, wallFleet, false)
	r := newRunner(t, dir, Options{Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GH_TOKEN=ghp_operator"}})
	out := runLeadBesideOrch(t, r, dir)
	section := func(name string) string {
		_, rest, _ := strings.Cut(out, "== "+name+"\n")
		s, _, _ := strings.Cut(rest, "== ")
		return s
	}
	for name, want := range map[string]string{
		"self":     `may not launch "boss"`,
		"unset":    "never acts as the operator",
		"forged":   "a session acts only as itself",
		"detached": "never acts as the operator",
		"worker6":  "already used its 5 launch call(s)",
	} {
		if s := section(name); !strings.Contains(s, want) || !strings.Contains(s, "rc=1") {
			t.Errorf("%s: got %q, want a refusal saying %q", name, s, want)
		}
	}
	for i := 1; i <= 5; i++ {
		if s := section("worker" + string(rune('0'+i))); !strings.Contains(s, "rc=0") {
			t.Errorf("worker%d: the allowed launch failed: %q", i, s)
		}
	}
	all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
	for _, s := range all {
		if s.Actor == "boss" {
			t.Errorf("boss was launched: %+v", s)
		}
	}
	r.Wait()
	for _, s := range all {
		if s.Actor == "worker" {
			waitEnded(t, r, s.ID)
		}
	}
}

// Launches made at once from a session's processes never pass its cap: the count and the record
// are one write transaction.
func TestConcurrentLaunchesKeepTheCap(t *testing.T) {
	f := fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  lead:
    behavior: scripts/lead.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/noop.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{
		"scripts/lead.sh": "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8; do autonomy runner launch worker >/dev/null 2>&1 & done\nwait\n" + scriptDone,
		"scripts/noop.sh": "#!/bin/sh\ntrue\n" + scriptDone,
	}}
	dir := installFleet(t, f, false)
	r := newRunner(t, dir, Options{Exe: builtAutonomy(t), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}})
	lead := launch(t, r, LaunchRequest{Actor: "lead"})
	if got := waitEnded(t, r, lead.ID); got.Status != ir.Done {
		t.Fatalf("lead ended %s: %s", got.Status, got.Reason)
	}
	all, _ := r.Store.List(t.Context(), store.ListOptions{All: true})
	workers := 0
	for _, s := range all {
		if s.Actor == "worker" {
			workers++
			waitEnded(t, r, s.ID)
		}
	}
	if workers != 5 {
		t.Errorf("%d workers launched at once, want the cap of 5", workers)
	}
}
