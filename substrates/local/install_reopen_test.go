package local

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// runner serve opens the installation again at each tick. The actor configs it read before are
// kept while their files are the very ones it read; a file replaced (as a compile renames new
// ones into place) or changed in place is read again.
func TestReopenKeepsOnlyTheConfigsStillInstalled(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  kept:
    behavior: scripts/true.sh
    triggers: [{ dispatch: true }]
  replaced:
    behavior: scripts/true.sh
    triggers: [{ dispatch: true }]
  touched:
    behavior: scripts/true.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	prev, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]*ActorConfig{}
	for _, name := range []string{"kept", "replaced", "touched"} {
		if before[name], err = prev.Actor(name); err != nil {
			t.Fatal(err)
		}
	}
	// replaced: a new file renamed over it, its behavior changed.
	path := filepath.Join(dir, filepath.FromSlash(ActorPath("replaced")))
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(old, []byte(`"behavior": ".autonomy/scripts/true.sh"`), []byte(`"behavior": ".autonomy/scripts/new1.sh"`), 1)
	if bytes.Equal(changed, old) {
		t.Fatalf("no behavior to change in %s", old)
	}
	if err := os.WriteFile(path+".new", changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	// touched: the same bytes written again in place, a second later.
	touched := filepath.Join(dir, filepath.FromSlash(ActorPath("touched")))
	fi, err := os.Stat(touched)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(touched, time.Time{}, fi.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}

	in, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	in.keepActors(prev)
	after := map[string]*ActorConfig{}
	for _, name := range []string{"kept", "replaced", "touched"} {
		if after[name], err = in.Actor(name); err != nil {
			t.Fatal(err)
		}
	}
	if after["kept"] != before["kept"] {
		t.Error("the config of an actor whose file did not change was read again")
	}
	if after["replaced"] == before["replaced"] || after["replaced"].Behavior != ".autonomy/scripts/new1.sh" {
		t.Errorf("the replaced config was kept: behavior %q", after["replaced"].Behavior)
	}
	if after["touched"] == before["touched"] {
		t.Error("the config of a file changed in place was kept")
	}
	// Another installation's configs are never taken.
	other, err := Open(installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  kept:\n    behavior: scripts/true.sh\n    triggers: [{ dispatch: true }]\n", files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false))
	if err != nil {
		t.Fatal(err)
	}
	other.keepActors(prev)
	if c, err := other.Actor("kept"); err != nil || c == before["kept"] {
		t.Errorf("another installation took this one's config: %v", err)
	}
}
