package substrates

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestWriteCreates(t *testing.T) {
	dir := t.TempDir()
	out := output("gh-actions",
		gen(".github/workflows/a.yml", "a: 1\n"),
		verbatim("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755),
		verbatim("README.md", "hello\n", 0o644),
	)
	plan := mustWrite(t, dir, out, WriteOptions{})
	want := "create .github/workflows/a.yml\ncreate README.md\ncreate bin/run.sh\n"
	if got := planString(plan); got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	for _, f := range out.Files {
		if got := readFile(t, dir, f.Path); got != string(f.Data) {
			t.Errorf("%s = %q, want %q", f.Path, got, f.Data)
		}
		fi, err := os.Stat(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != f.Mode {
			t.Errorf("%s: mode %v, want %v", f.Path, fi.Mode().Perm(), f.Mode)
		}
	}
	// Only the ledger is left in .autonomy: no staging directory, no journal.
	var left []string
	for p := range snapshot(t, filepath.Join(dir, ".autonomy")) {
		left = append(left, p)
	}
	if want := []string{".", "generated", "generated/gh-actions.json"}; !sameSet(left, want) {
		t.Errorf(".autonomy holds %v, want %v", left, want)
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestWriteLedgerFormat(t *testing.T) {
	out := output("gh-actions",
		verbatim("b/run.sh", "", 0o755),
		verbatim("a.md", "x\n", 0o644),
	)
	want := `{
  "//": "DO NOT EDIT. Written by autonomy compile: the files it generated for target gh-actions, with their sha256.",
  "target": "gh-actions",
  "files": {
    "a.md": {"sha256": "` + sha("x\n") + `", "mode": "0644"},
    "b/run.sh": {"sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "mode": "0755"}
  }
}
`
	// Two directories, two runs: the same Output gives the same bytes.
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		mustWrite(t, dir, out, WriteOptions{})
		if got := readFile(t, dir, ".autonomy/generated/gh-actions.json"); got != want {
			t.Errorf("ledger:\n%s\nwant:\n%s", got, want)
		}
	}
	empty := "{\n  \"//\": \"DO NOT EDIT. Written by autonomy compile: the files it generated for target t, with their sha256.\",\n  \"target\": \"t\",\n  \"files\": {}\n}\n"
	dir := t.TempDir()
	mustWrite(t, dir, output("t"), WriteOptions{})
	if got := readFile(t, dir, ".autonomy/generated/t.json"); got != empty {
		t.Errorf("empty ledger:\n%s\nwant:\n%s", got, empty)
	}
}

// sha is the sha256 of s, for expected ledgers; hashHex itself is checked against sha256sum in
// TestStamp.
func sha(s string) string { return hashHex([]byte(s)) }

func TestWriteUnchangedTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	out := output("t", gen("a/x.yml", "x: 1\n"), verbatim("run", "#!/bin/sh\n", 0o755))
	mustWrite(t, dir, out, WriteOptions{})
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"a/x.yml", "run", ".autonomy/generated/t.json"} {
		if err := os.Chtimes(filepath.Join(dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	plan := mustWrite(t, dir, out, WriteOptions{})
	if got, want := planString(plan), "unchanged a/x.yml\nunchanged run\n"; got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	sameTree(t, before, snapshot(t, dir))
	for _, p := range []string{"a/x.yml", "run", ".autonomy/generated/t.json"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(old) {
			t.Errorf("%s was rewritten (modified %v)", p, fi.ModTime())
		}
	}
}

func TestWriteUpdates(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("x.yml", "x: 1\n"), gen("y.yml", "y: 1\n")), WriteOptions{})
	next := output("t", gen("x.yml", "x: 2\n"), gen("y.yml", "y: 1\n"))
	plan := mustWrite(t, dir, next, WriteOptions{})
	if got, want := planString(plan), "update x.yml\nunchanged y.yml\n"; got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	if got := readFile(t, dir, "x.yml"); got != string(next.Files[0].Data) {
		t.Errorf("x.yml = %q", got)
	}
	if got := readFile(t, dir, ledgerPath("t")); !strings.Contains(got, sha(string(next.Files[0].Data))) {
		t.Errorf("ledger does not record the new hash:\n%s", got)
	}
}

func TestWriteModeChangeOnly(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", verbatim("run", "#!/bin/sh\n", 0o644)), WriteOptions{})
	plan := mustWrite(t, dir, output("t", verbatim("run", "#!/bin/sh\n", 0o755)), WriteOptions{})
	if got, want := planString(plan), "update run\n"; got != want {
		t.Errorf("plan: %swant %s", got, want)
	}
	fi, err := os.Stat(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", fi.Mode().Perm())
	}
	if !strings.Contains(readFile(t, dir, ledgerPath("t")), `"mode": "0755"`) {
		t.Error("ledger still records the old mode")
	}
	// A user's chmod of a generated file is put right the same way.
	if err := os.Chmod(filepath.Join(dir, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := planString(mustWrite(t, dir, output("t", verbatim("run", "#!/bin/sh\n", 0o755)), WriteOptions{})); got != "update run\n" {
		t.Errorf("after chmod: %s", got)
	}
}

func TestWriteDeletesStaleFilesAndEmptyDirs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "keep/mine.txt", "a person's file\n", 0o644)
	mustWrite(t, dir, output("t",
		gen("a/b/c/old.yml", "old\n"),
		gen("keep/old.yml", "old\n"),
		gen("stay.yml", "s\n"),
	), WriteOptions{})
	plan := mustWrite(t, dir, output("t", gen("stay.yml", "s\n")), WriteOptions{})
	want := "delete a/b/c/old.yml\ndelete keep/old.yml\nunchanged stay.yml\n"
	if got := planString(plan); got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	for _, p := range []string{"a/b/c/old.yml", "a/b/c", "a/b", "a", "keep/old.yml"} {
		if exists(dir, p) {
			t.Errorf("%s is still there", p)
		}
	}
	if !exists(dir, "keep/mine.txt") {
		t.Error("a directory still holding a person's file was removed with it")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the output directory itself went: %v", err)
	}
	if got := ledgerPaths(t, dir, "t"); !reflect.DeepEqual(got, []string{"stay.yml"}) {
		t.Errorf("ledger lists %v", got)
	}
}

func TestWriteDropsStaleFileAlreadyGone(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("gone.yml", "g\n"), gen("stay.yml", "s\n")), WriteOptions{})
	if err := os.Remove(filepath.Join(dir, "gone.yml")); err != nil {
		t.Fatal(err)
	}
	plan := mustWrite(t, dir, output("t", gen("stay.yml", "s\n")), WriteOptions{})
	if got := planString(plan); got != "unchanged stay.yml\n" {
		t.Errorf("plan: %s", got)
	}
	if got := ledgerPaths(t, dir, "t"); !reflect.DeepEqual(got, []string{"stay.yml"}) {
		t.Errorf("ledger lists %v", got)
	}
}

func TestWriteStaleHandEdited(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("old.yml", "old\n"), gen("stay.yml", "s\n")), WriteOptions{})
	writeFile(t, dir, "old.yml", "my edit\n", 0o644)
	before := snapshot(t, dir)
	cs := conflicts(t, dir, output("t", gen("stay.yml", "s\n")), WriteOptions{})
	want := []Conflict{{Path: "old.yml", Problem: "edited by hand since autonomy generated it", Hint: hintStaleEdit}}
	if !reflect.DeepEqual(cs, want) {
		t.Errorf("conflicts %+v, want %+v", cs, want)
	}
	sameTree(t, before, snapshot(t, dir))

	plan := mustWrite(t, dir, output("t", gen("stay.yml", "s\n")), WriteOptions{Force: true})
	if got := planString(plan); got != "delete old.yml\nunchanged stay.yml\n" {
		t.Errorf("forced plan: %s", got)
	}
	if exists(dir, "old.yml") {
		t.Error("forced write kept the stale file")
	}
}

func TestWriteHandEdited(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("x.yml", "x: 1\n")), WriteOptions{})
	writeFile(t, dir, "x.yml", readFile(t, dir, "x.yml")+"# mine\n", 0o644)
	before := snapshot(t, dir)
	next := output("t", gen("x.yml", "x: 2\n"))
	cs := conflicts(t, dir, next, WriteOptions{})
	want := []Conflict{{Path: "x.yml", Problem: "edited by hand since autonomy generated it",
		Hint: "move your change into the profile, or pass --force to overwrite it"}}
	if !reflect.DeepEqual(cs, want) {
		t.Errorf("conflicts %+v, want %+v", cs, want)
	}
	sameTree(t, before, snapshot(t, dir))
	if got := planString(mustWrite(t, dir, next, WriteOptions{Force: true})); got != "update x.yml\n" {
		t.Errorf("forced plan: %s", got)
	}
	if got := readFile(t, dir, "x.yml"); got != string(next.Files[0].Data) {
		t.Errorf("x.yml = %q", got)
	}
}

func TestWriteUnlistedFiles(t *testing.T) {
	stamped := gen("x.yml", "x: 1\n")
	tests := []struct {
		name    string
		onDisk  string
		out     File
		force   bool
		plan    string
		problem string // a conflict's problem, "" for none
	}{
		{name: "foreign file refused", onDisk: "mine\n", out: stamped, problem: "exists and was not generated by autonomy"},
		{name: "foreign file refused even with force", onDisk: "mine\n", out: stamped, force: true, problem: "exists and was not generated by autonomy"},
		{name: "identical foreign file adopted", onDisk: "same\n", out: verbatim("x.yml", "same\n", 0o644), plan: "unchanged x.yml\n"},
		{name: "intact header adopted without ledger", onDisk: string(gen("x.yml", "x: 0\n").Data), out: stamped, plan: "update x.yml\n"},
		{name: "edited header refused", onDisk: string(gen("x.yml", "x: 0\n").Data) + "edit\n", out: stamped, problem: "edited by hand since autonomy generated it"},
		{name: "edited header forced", onDisk: string(gen("x.yml", "x: 0\n").Data) + "edit\n", out: stamped, force: true, plan: "update x.yml\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "x.yml", tt.onDisk, 0o644)
			before := snapshot(t, dir)
			plan, err := Write(dir, output("t", tt.out), WriteOptions{Force: tt.force})
			if tt.problem != "" {
				var ce *ConflictError
				if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Problem != tt.problem {
					t.Fatalf("got %v, want the conflict %q", err, tt.problem)
				}
				sameTree(t, before, snapshot(t, dir))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := planString(plan); got != tt.plan {
				t.Errorf("plan %q, want %q", got, tt.plan)
			}
			if got := readFile(t, dir, "x.yml"); got != string(tt.out.Data) {
				t.Errorf("x.yml = %q", got)
			}
			if got := ledgerPaths(t, dir, "t"); !reflect.DeepEqual(got, []string{"x.yml"}) {
				t.Errorf("ledger lists %v", got)
			}
		})
	}
}

func TestWriteDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	out := output("t", gen("a/x.yml", "x\n"))
	plan, err := Write(dir, out, WriteOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := planString(plan); got != "create a/x.yml\n" {
		t.Errorf("plan: %s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("dry run wrote %v", entries)
	}

	// With every kind of change pending, still nothing moves.
	mustWrite(t, dir, output("t", gen("a/x.yml", "x\n"), gen("old.yml", "o\n"), verbatim("run", "r\n", 0o644)), WriteOptions{})
	before := snapshot(t, dir)
	next := output("t", gen("a/x.yml", "x2\n"), gen("new.yml", "n\n"), verbatim("run", "r\n", 0o755))
	plan, err = Write(dir, next, WriteOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "update a/x.yml\ncreate new.yml\ndelete old.yml\nupdate run\n"
	if got := planString(plan); got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	sameTree(t, before, snapshot(t, dir))
	// The dry run's plan is what the real run does.
	if got := planString(mustWrite(t, dir, next, WriteOptions{})); got != want {
		t.Errorf("real plan:\n%swant:\n%s", got, want)
	}
}

func TestWriteRejectsBadDirAndOutput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "file", "x", 0o644)
	tests := []struct {
		name, dir string
		out       *Output
		want      string
	}{
		{"missing dir", filepath.Join(dir, "nope"), output("t"), "no such file or directory"},
		{"dir is a file", filepath.Join(dir, "file"), output("t"), "is not a directory"},
		{"invalid output", dir, output("t", verbatim("../x", "", 0o644)), "leaves the output directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, dir)
			_, err := Write(tt.dir, tt.out, WriteOptions{})
			var ce *ConflictError
			if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a plain error containing %q", err, tt.want)
			}
			sameTree(t, before, snapshot(t, dir))
		})
	}
	if _, err := Write(filepath.Join(dir, "nope"), output("t"), WriteOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing directory is not fs.ErrNotExist: %v", err)
	}
}

func TestOpAndDriftKindNames(t *testing.T) {
	for op, want := range map[Op]string{Create: "create", Update: "update", Delete: "delete", Keep: "unchanged", 0: "Op(0)"} {
		if op.String() != want {
			t.Errorf("Op %d = %q, want %q", int(op), op.String(), want)
		}
	}
	for k, want := range map[DriftKind]string{Missing: "missing", Changed: "changed", Stale: "stale", 9: "DriftKind(9)"} {
		if k.String() != want {
			t.Errorf("DriftKind %d = %q, want %q", int(k), k.String(), want)
		}
	}
}

// TestWriteLockTimeout: Write waits a bounded time for another process's lock on the directory,
// then says so plainly, having written nothing.
func TestWriteLockTimeout(t *testing.T) {
	dir := t.TempDir()
	unlock, err := tryLock(dir, true) // another open file description: another holder
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	waited := 0
	out := &Output{Target: "t", Files: []File{{Path: "a.txt", Data: []byte("a\n"), Mode: 0o644}}}
	_, err = Write(dir, out, WriteOptions{LockWait: 200 * time.Millisecond, Waiting: func() { waited++ }})
	var locked *LockedError
	if !errors.As(err, &locked) || waited != 1 || !strings.Contains(err.Error(), "another autonomy process holds "+dir) {
		t.Fatalf("err = %v, waiting called %d times", err, waited)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("wrote %d entries while locked out", len(entries))
	}
	// A dry run only plans: it shares the lock with another planner.
	unlock()
	shared, err := tryLock(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer shared()
	if _, err := Write(dir, out, WriteOptions{DryRun: true, LockWait: 200 * time.Millisecond}); err != nil {
		t.Fatalf("dry run beside a shared lock: %v", err)
	}
}
