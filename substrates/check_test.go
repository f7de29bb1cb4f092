package substrates

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCheckUpToDate(t *testing.T) {
	dir := t.TempDir()
	out := output("t", gen("a/x.yml", "x\n"), verbatim("run", "#!/bin/sh\n", 0o755))
	mustWrite(t, dir, out, WriteOptions{})
	drifts, err := Check(dir, out)
	if err != nil || len(drifts) != 0 {
		t.Errorf("Check = %+v, %v; want no drift", drifts, err)
	}
}

func TestCheckDrift(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFile(t, outside, "x.yml", "outside\n", 0o644)
	old := output("t",
		verbatim("changed.yml", "a: 1\nb: 2\n", 0o644),
		verbatim("chmod", "#!/bin/sh\n", 0o644),
		verbatim("both", "one\n", 0o644),
		gen("missing.yml", "m\n"),
		gen("stale.yml", "s\n"),
		gen("stale-gone.yml", "g\n"),
		verbatim("shared.md", "shared\n", 0o644),
		gen("linked/x.yml", "l\n"),
		gen("link.yml", "k\n"),
		gen("blocked/x.yml", "b\n"),
	)
	mustWrite(t, dir, old, WriteOptions{})
	mustWrite(t, dir, output("other", verbatim("shared.md", "shared\n", 0o644)), WriteOptions{})
	for _, p := range []string{"missing.yml", "stale-gone.yml", "link.yml"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.yml"), filepath.Join(dir, "link.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "blocked")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "blocked", "a file where a directory was\n", 0o644)

	compiled := output("t",
		verbatim("changed.yml", "a: 1\nb: 3\n", 0o644),
		verbatim("chmod", "#!/bin/sh\n", 0o755),
		verbatim("both", "two\n", 0o755),
		gen("missing.yml", "m\n"),
		gen("linked/x.yml", "l\n"),
		gen("link.yml", "k\n"),
		gen("blocked/x.yml", "b\n"),
	)
	drifts, err := Check(dir, compiled)
	if err != nil {
		t.Fatal(err)
	}
	want := []Drift{
		{Path: "blocked/x.yml", Kind: Missing},
		{Path: "both", Kind: Changed, Diff: "mode 0644 on disk, 0755 compiled\n--- both (on disk)\n+++ both (compiled)\n@@ -1 +1 @@\n-one\n+two\n"},
		{Path: "changed.yml", Kind: Changed, Diff: "--- changed.yml (on disk)\n+++ changed.yml (compiled)\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n"},
		{Path: "chmod", Kind: Changed, Diff: "mode 0644 on disk, 0755 compiled\n"},
		{Path: "link.yml", Kind: Changed, Diff: "a symbolic link on disk, a file compiled; autonomy does not follow it\n"},
		{Path: "linked/x.yml", Kind: Changed, Diff: "its parent \"linked\" is a symbolic link on disk; autonomy does not follow it\n"},
		{Path: "missing.yml", Kind: Missing},
		{Path: "stale.yml", Kind: Stale},
	}
	if !reflect.DeepEqual(drifts, want) {
		t.Errorf("drifts:\n%+v\nwant:\n%+v", drifts, want)
	}
}

func TestCheckStaleFromTheJournal(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, version(1, "a.yml"), WriteOptions{})
	v2 := version(2, "a.yml", "b.yml")
	writeFile(t, dir, journalPath("t"), string(encodeLedger("t", ledgerRowsOf(v2))), 0o644)
	writeFile(t, dir, "b.yml", string(v2.Files[1].Data), 0o644)
	drifts, err := Check(dir, version(1, "a.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Drift{{Path: "b.yml", Kind: Stale}}; !reflect.DeepEqual(drifts, want) {
		t.Errorf("drifts %+v, want %+v", drifts, want)
	}
}

func TestCheckWithoutLedger(t *testing.T) {
	dir := t.TempDir()
	drifts, err := Check(dir, output("t", gen("a.yml", "a\n")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Drift{{Path: "a.yml", Kind: Missing}}; !reflect.DeepEqual(drifts, want) {
		t.Errorf("drifts %+v, want %+v", drifts, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Check wrote %v", entries)
	}
}

func TestCheckErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Check(filepath.Join(dir, "nope"), output("t")); err == nil {
		t.Error("a missing directory passed")
	}
	if _, err := Check(dir, output("t", verbatim("/abs", "", 0o644))); err == nil || !strings.Contains(err.Error(), "absolute path") {
		t.Errorf("an invalid output passed: %v", err)
	}
	writeFile(t, dir, ledgerPath("t"), "not json", 0o644)
	var ce *ConflictError
	if _, err := Check(dir, output("t")); !errors.As(err, &ce) || ce.Conflicts[0].Path != ledgerPath("t") {
		t.Errorf("a corrupt ledger passed: %v", err)
	}
}

// TestCheckStaleWithoutLedger: with the ledger gone (never committed, say), a generated file the
// profile no longer produces is still found by its header; a person's file, and a file generated
// from another profile, are not.
func TestCheckStaleWithoutLedger(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("wf/a.yml", "a: 1\n"), gen("wf/b.yml", "b: 1\n")), WriteOptions{})
	if err := os.Remove(filepath.Join(dir, ".autonomy/generated/t.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "wf/mine.yml", "# a person's workflow\n", 0o644)
	other := Output{Files: []File{{Path: "wf/x.yml", Data: []byte("x: 1\n"), Mode: 0o644, Header: HashHeader}}}
	Stamp(&other, "profiles/other/ir.yml")
	writeFile(t, dir, "wf/x.yml", string(other.Files[0].Data), 0o644)
	drifts, err := Check(dir, output("t", gen("wf/a.yml", "a: 1\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(drifts) != 1 || drifts[0].Path != "wf/b.yml" || drifts[0].Kind != Stale {
		t.Fatalf("got %+v, want wf/b.yml stale only", drifts)
	}
}

// TestCheckWaitsForAnInstall: check waits while a compile holds the directory's lock, so it
// never compares a half-done install; it does not block another check.
func TestCheckWaitsForAnInstall(t *testing.T) {
	dir := t.TempDir()
	out := &Output{Target: "t", Files: []File{{Path: "a.txt", Data: []byte("a\n"), Mode: 0o644}}}
	if _, err := Write(dir, out, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	unlock, err := tryLock(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		released <- time.Now()
		unlock()
	}()
	drifts, err := Check(dir, out)
	done := time.Now()
	if err != nil || len(drifts) != 0 {
		t.Fatalf("check: %v %v", drifts, err)
	}
	if at := <-released; done.Before(at) {
		t.Fatal("check did not wait for the install's lock")
	}
	shared, err := tryLock(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer shared()
	if _, err := Check(dir, out); err != nil {
		t.Fatalf("check beside another check: %v", err)
	}
}

// A generated file edited by hand is drift that a plain compile refuses to overwrite: check says
// so (Edited), where it told the user to run a compile that then refused (newc9). A file the
// profile now compiles differently, untouched since, is not Edited.
func TestCheckTellsAHandEditFromAnOutdatedFile(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("edited.yml", "e: 1\n"), gen("outdated.yml", "o: 1\n")), WriteOptions{})
	path := filepath.Join(dir, "edited.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "edited.yml", string(data)+"by: hand\n", 0o644)
	drifts, err := Check(dir, output("t", gen("edited.yml", "e: 1\n"), gen("outdated.yml", "o: 2\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(drifts) != 2 || drifts[0].Path != "edited.yml" || !drifts[0].Edited || drifts[1].Path != "outdated.yml" || drifts[1].Edited || drifts[1].Kind != Changed {
		t.Errorf("drifts: %+v", drifts)
	}
	// And a compile refuses the edited one, as check now says.
	if _, err := Write(dir, output("t", gen("edited.yml", "e: 1\n"), gen("outdated.yml", "o: 2\n")), WriteOptions{}); err == nil || !strings.Contains(err.Error(), "edited by hand") {
		t.Errorf("compile over the hand edit: %v", err)
	}
}
