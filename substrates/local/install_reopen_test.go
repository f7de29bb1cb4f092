package local

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// runner serve opens the installation again at each tick. The actor configs it read before are
// kept while their files hold the very bytes it decoded; a file replaced (as a compile renames
// new ones into place) is read again, and so is one an agent wrote (read meanwhile) and then put
// back as installed, with the times it had.
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
  restored:
    behavior: scripts/true.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	prev, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]*ActorConfig{}
	for _, name := range []string{"kept", "replaced"} {
		if before[name], err = prev.Actor(name); err != nil {
			t.Fatal(err)
		}
	}
	// restored: an agent's version, the same size, read by the previous tick, then the
	// installed bytes put back in place with the times the agent's had.
	restored := filepath.Join(dir, filepath.FromSlash(ActorPath("restored")))
	installed, err := os.ReadFile(restored)
	if err != nil {
		t.Fatal(err)
	}
	agents := restamped(t, installed, func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"behavior": ".autonomy/scripts/true.sh"`), []byte(`"behavior": ".autonomy/scripts/evil.sh"`), 1)
	})
	if err := os.WriteFile(restored, agents, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(restored)
	if err != nil {
		t.Fatal(err)
	}
	if before["restored"], err = prev.Actor("restored"); err != nil || before["restored"].Behavior != ".autonomy/scripts/evil.sh" {
		t.Fatalf("the agent's version was not read: %v", err)
	}
	if err := os.WriteFile(restored, installed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(restored, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	// replaced: a new file renamed over it, its behavior changed.
	path := filepath.Join(dir, filepath.FromSlash(ActorPath("replaced")))
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := restamped(t, old, func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"behavior": ".autonomy/scripts/true.sh"`), []byte(`"behavior": ".autonomy/scripts/new1.sh"`), 1)
	})
	if bytes.Equal(changed, old) {
		t.Fatalf("no behavior to change in %s", old)
	}
	if err := os.WriteFile(path+".new", changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	in, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	in.keepActors(prev)
	after := map[string]*ActorConfig{}
	for _, name := range []string{"kept", "replaced", "restored"} {
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
	if after["restored"] == before["restored"] || after["restored"].Behavior != ".autonomy/scripts/true.sh" {
		t.Errorf("the agent's config was kept once the installed one was put back: behavior %q", after["restored"].Behavior)
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

// runner serve wakes at least once a minute, whatever the schedule it read says: a recompile
// that brings a trigger nearer (yearly to every minute) takes effect within a minute, where it
// slept until the old schedule's wake, up to an hour, firing nothing.
func TestServeWakesEachMinuteForARecompile(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  ticker:\n    behavior: scripts/true.sh\n    triggers: [{ cron: \"0 0 1 1 *\" }]\n",
		files: map[string]string{"scripts/true.sh": "#!/bin/sh\n" + scriptDone}}, false)
	c := &clock{}
	c.Set("2026-03-02T02:23:08Z")
	r := newRunner(t, dir, Options{Now: c.Now})
	if got, want := r.serveWake(context.Background(), io.Discard), c.Now().Truncate(time.Minute).Add(time.Minute); !got.Equal(want) {
		t.Errorf("serve wakes at %s, want %s", got, want)
	}
}
