package local

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// editedFleet has a script on cron and on dispatch, and a person: each runs, or is handed, a
// behavior autonomy installed.
var editedFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  job:
    behavior: scripts/job.sh
    triggers: [{ dispatch: true }, { cron: "0 * * * *" }]
  maintainer:
    kind: human
    behavior: humans/maintainer.md
    triggers: [{ dispatch: true }]
`,
	files: map[string]string{
		"scripts/job.sh":       "#!/bin/sh\ntouch \"$AUTONOMY_DIR/ran\"\n" + scriptDone,
		"humans/maintainer.md": "# Decide\n",
	},
}

// appendTo appends text to the installed file rel of dir.
func appendTo(t *testing.T, dir, rel, text string) (restore func()) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(rel))
	was, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(append([]byte{}, was...), text...), 0o755); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(path, was, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A hand edit of what autonomy installed is not run: a launch of an actor whose behavior or
// launcher config changed since the compile is refused, naming the file and the fix, with
// nothing recorded; and so is an installation whose schedule or runner config changed. check
// and compile report such an edit; the runner used to run it.
func TestAnEditedInstallationIsNotRun(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	ctx := context.Background()
	edits := []struct {
		actor, file, want string
	}{
		{"job", ".autonomy/scripts/job.sh", "its behavior " + filepath.Join(dir, ".autonomy", "scripts", "job.sh") + " was edited after autonomy installed it"},
		{"maintainer", ".autonomy/humans/maintainer.md", "its behavior " + filepath.Join(dir, ".autonomy", "humans", "maintainer.md") + " was edited after autonomy installed it"},
		{"job", ActorPath("job"), filepath.Join(dir, filepath.FromSlash(ActorPath("job"))) + " was edited after autonomy generated it"},
	}
	for _, e := range edits {
		restore := appendTo(t, dir, e.file, "\n")
		r := newRunner(t, dir, Options{})
		_, err := r.Launch(ctx, LaunchRequest{Actor: e.actor})
		refused(t, err, e.want)
		refused(t, err, "move the change into the profile and compile again")
		if all, err := r.Store.List(ctx, store.ListOptions{All: true}); err != nil || len(all) != 0 {
			t.Errorf("%s edited: sessions recorded %v (%v)", e.file, all, err)
		}
		restore()
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !os.IsNotExist(err) {
		t.Fatalf("an edited installation ran: %v", err)
	}
	for _, rel := range []string{SchedulePath, RunnerPath} {
		restore := appendTo(t, dir, rel, " ")
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), filepath.FromSlash(rel)+" was edited after autonomy generated it") {
			t.Errorf("%s edited: Open: %v", rel, err)
		}
		restore()
	}
	// What the compile installed runs.
	r := newRunner(t, dir, Options{})
	if s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "job"}).ID); s.Status != ir.Done {
		t.Fatalf("the installed job ended %s: %s", s.Status, s.Reason)
	}
}

// A tick defers an actor whose behavior was edited, saying why, and reports it (each of its
// sessions would fail: attack24 found one fired, and failed, at every slot); a session recorded
// before the edit is failed by its supervisor, naming the file, before it runs it.
func TestAnEditedBehaviorIsNotRunByATickNorItsSupervisor(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	c := &clock{}
	r := newRunner(t, dir, Options{Now: c.Now})
	ctx := context.Background()
	c.Set("2026-03-02T06:59:00Z")
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	appendTo(t, dir, ".autonomy/scripts/job.sh", "touch \"$AUTONOMY_DIR/edited\"\n")
	c.Set("2026-03-02T07:00:00Z")
	rep, err := r.Tick(ctx)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "scripts/job.sh was edited after autonomy installed it") {
		t.Errorf("the tick's error: %v", err)
	}
	if len(rep.Fired) != 0 || len(rep.Deferred) != 1 || !strings.Contains(rep.Deferred[0].Reason, "was edited") {
		t.Errorf("fired %v, deferred %+v", rep.Fired, rep.Deferred)
	}
	got := supervised(t, r, "job")
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "scripts/job.sh was edited after autonomy installed it") {
		t.Errorf("the session ended %s: %s", got.Status, got.Reason)
	}
	for _, f := range []string{"ran", "edited"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("the edited behavior ran (%s): %v", f, err)
		}
	}
}

// A launcher config compiled before autonomy recorded its behavior's sha256 vouches for no
// behavior: its launch is refused, saying to compile again, where it used to run unchecked.
func TestAConfigWithNoBehaviorSumIsRefusedUntilCompiledAgain(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	path := filepath.Join(dir, filepath.FromSlash(ActorPath("job")))
	was, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := restamped(t, was, func(b []byte) []byte {
		return regexp.MustCompile(`(?m)^\s*"behaviorSha256": "[0-9a-f]{64}",\n`).ReplaceAll(b, nil)
	})
	if bytes.Contains(old, []byte("behaviorSha256")) {
		t.Fatalf("the sum is still there:\n%s", old)
	}
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{})
	_, err = r.Launch(context.Background(), LaunchRequest{Actor: "job"})
	refused(t, err, `actor "job": its launcher config records no sha256 of its behavior`)
	refused(t, err, "compile the profile again")
	if _, err := os.Stat(filepath.Join(dir, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the unvouched behavior ran: %v", err)
	}
}

// A behavior larger than any file a compile installs is refused unread: a sparse file of
// gigabytes held a tick's write transaction while it was hashed (attack26).
func TestAHugeBehaviorIsRefusedUnread(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	if err := os.Truncate(filepath.Join(dir, ".autonomy", "scripts", "job.sh"), 64<<30); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{})
	_, err := r.Launch(context.Background(), LaunchRequest{Actor: "job"})
	refused(t, err, "is not the file autonomy installed (68719476736 bytes, over what a compile installs)")
}

// serve with its installation edited fires nothing, saying why once, where it fired from the
// installation read before and every session's supervisor refused it (newc9: "its runner died
// before starting it"); put back, the trigger that came due meanwhile fires.
func TestServeFiresNothingFromAnEditedInstallation(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	c := &clock{}
	c.Set("2026-03-02T06:59:00Z")
	r := newRunner(t, dir, Options{Now: c.Now})
	ctx := context.Background()
	t.Cleanup(func() { cancelRunning(t, r) })
	var said serveSaid
	var out bytes.Buffer
	if _, err := r.serveOnce(ctx, &out, &said); err != nil {
		t.Fatal(err)
	}
	restore := appendTo(t, dir, SchedulePath, " ")
	for _, at := range []string{"2026-03-02T07:00:00Z", "2026-03-02T07:01:00Z"} {
		c.Set(at)
		wake, err := r.serveOnce(ctx, &out, &said)
		if err != nil || !wake.Equal(c.Now().Add(time.Minute)) {
			t.Fatalf("serve wakes at %s (%v), want in a minute", wake, err)
		}
	}
	if n := strings.Count(out.String(), "autonomy: nothing fires until the installation is read again (serve tries each minute): "+filepath.Join(dir, filepath.FromSlash(SchedulePath))+" was edited"); n != 1 {
		t.Errorf("serve said the edit %d times, want once:\n%s", n, out.String())
	}
	if all, err := r.Store.List(ctx, store.ListOptions{All: true}); err != nil || len(all) != 0 {
		t.Fatalf("sessions fired from an edited installation: %v %v", all, err)
	}
	restore()
	c.Set("2026-03-02T07:02:00Z")
	if _, err := r.serveOnce(ctx, &out, &said); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "fired job") {
		t.Errorf("the trigger due meanwhile did not fire once the installation was put back:\n%s", out.String())
	}
}

// --approve on a person's ask is refused naming how an ask is resolved (newc9 was told only that
// the session "waits for no approval").
func TestApprovingAPersonsAskSaysHowToResolveIt(t *testing.T) {
	t.Parallel()
	r := newRunner(t, installFleet(t, editedFleet, false), Options{})
	s := launch(t, r, LaunchRequest{Actor: "maintainer"})
	_, err := r.Respond(context.Background(), s.ID, "any", playproto.Answer{Approve: true}, "")
	refused(t, err, "waits for no approval: a person's ask is resolved with autonomy runner update "+s.ID+" --token TOKEN --status done --evidence WHAT-YOU-CHECKED")
}
