//go:build unix

package local

import (
	"os"
	"path/filepath"
	"testing"
)

// The TMPDIR a step playbook session's run gets is recorded, so that whoever finishes for its dead
// supervisor removes it, from any TMPDIR of its own; the record (in a state folder an agent in
// the installation root can write) removes nothing but a folder named for that session.
func TestStepsTempIsRecordedAndRemovedOnlyAsItself(t *testing.T) {
	in := &Install{Dir: t.TempDir()}
	parent := t.TempDir()
	env, remove, err := in.stepsTemp([]string{"TMPDIR=" + parent}, []string{"TMPDIR=/elsewhere", "HOME=/h"}, "1-abcd")
	if err != nil {
		t.Fatal(err)
	}
	dir := env[len(env)-1][len("TMPDIR="):]
	if filepath.Dir(dir) != parent || !isDir(dir) {
		t.Fatalf("TMPDIR %s, want a new folder under the runner's %s (a param's TMPDIR does not move it)", dir, parent)
	}
	// A run killed mid-step leaves its step's folder; a dead supervisor leaves it all.
	if err := os.Mkdir(filepath.Join(dir, "autonomy-step-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := in.removeStepsTemp("1-abcd"); got != dir || isDir(dir) {
		t.Fatalf("removed %q, want %s gone", got, dir)
	}
	remove() // the supervisor's own removal, once it is gone already
	if _, err := os.Lstat(in.stepsTempRecord("1-abcd")); !os.IsNotExist(err) {
		t.Fatalf("the record outlived the folder: %v", err)
	}

	// A record naming another folder, another session's, or a link with the right name.
	keep := t.TempDir()
	other := filepath.Join(parent, in.stepsTempPrefix("2-efgh")+"1")
	link := filepath.Join(parent, in.stepsTempPrefix("1-abcd")+"2")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(keep, link); err != nil {
		t.Fatal(err)
	}
	for _, planted := range []string{keep, other, link, "relative/" + in.stepsTempPrefix("1-abcd") + "3"} {
		if err := os.WriteFile(in.stepsTempRecord("1-abcd"), []byte(planted), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := in.removeStepsTemp("1-abcd"); got != "" {
			t.Errorf("a record naming %s removed %s", planted, got)
		}
	}
	if !isDir(keep) || !isDir(other) {
		t.Fatal("a planted record removed a folder that is not the session's")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link: %v", err)
	}
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
