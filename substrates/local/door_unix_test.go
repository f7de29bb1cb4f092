//go:build unix

package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A request at a session's door that is not a plain file of a door verb with --NAME=VALUE flags
// is answered with exit 2 and why, at once: a FIFO, a link, an oversized or unreadable file, a
// verb the door does not carry, and the runner's own flags (another installation, another
// substrate) run nothing.
func TestDoorRefusesHostileRequests(t *testing.T) {
	dir := t.TempDir()
	door, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	put := func(name string, req any) {
		b, _ := json.Marshal(req)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.req"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(`{"verb":"list"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.req")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.req"), make([]byte, maxDoorFile+2), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "folder.req", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	put("verb.req", DoorRequest{Verb: "serve"})
	put("dir.req", DoorRequest{Verb: "launch", Args: []string{"--dir=/elsewhere", "--", "worker"}})
	put("target.req", DoorRequest{Verb: "list", Args: []string{"--target=gh-actions"}})
	put("short.req", DoorRequest{Verb: "logs", Args: []string{"-f", "--", "1-a"}})
	sv := &supervision{}
	for name, want := range map[string]string{
		"fifo.req": "a request is a plain file", "folder.req": "a request is a plain file", "link.req": "cannot be read", "huge.req": "larger than",
		"verb.req": `"serve" is not a verb`, "dir.req": "dir, target, kubeconfig, namespace are not a session's to set",
		"target.req": "are not a session's to set", "short.req": "--NAME=VALUE",
	} {
		a := sv.answerDoor(t.Context(), door, name)
		if a.Code != 2 || !strings.Contains(a.Stderr, want) {
			t.Errorf("%s: exit %d, %q; want exit 2 saying %q", name, a.Code, a.Stderr, want)
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still at the door: %v", name, err)
		}
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("the file a link pointed at: %v", err)
	}
}

// The door is used only where the runner's state is read-only (a walled session's jail, which
// TestRootLauncherShellGoesThroughTheDoor runs), never where this process can write the store, nor
// for what is not a session id.
func TestDoorOfNeedsAReadOnlyState(t *testing.T) {
	dir := t.TempDir()
	door := filepath.Join(dir, filepath.FromSlash(StateDir), "results", "1-ab.session", doorFolder)
	if err := os.MkdirAll(door, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1-ab", "../1-ab", "1-ab/..", ""} {
		if _, ok := DoorOf(dir, id); ok {
			t.Errorf("%q: a door is used where the state is writable", id)
		}
	}
}
