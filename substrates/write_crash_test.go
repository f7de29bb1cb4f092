package substrates

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// version is one compile of a small fleet: n selects the content, files the names present.
func version(n int, files ...string) *Output {
	var fs []File
	for _, p := range files {
		fs = append(fs, gen(p, fmt.Sprintf("%s: %d\n", p, n)))
	}
	return output("t", fs...)
}

func TestWriteRecoversFromAnInterruptedInstall(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, version(1, "a.yml", "b.yml", "sub/d.yml"), WriteOptions{})

	// A crash while installing version 2: its journal and some of its files are in place, the
	// ledger still describes version 1.
	v2 := version(2, "a.yml", "b.yml", "c/new.yml", "sub/d.yml")
	writeFile(t, dir, journalPath("t"), string(encodeLedger("t", ledgerRowsOf(v2))), 0o644)
	writeFile(t, dir, "a.yml", string(v2.Files[0].Data), 0o644)
	writeFile(t, dir, "c/new.yml", string(v2.Files[2].Data), 0o644)

	// Compiling version 3, which drops c/new.yml, sees no hand edit anywhere.
	plan := mustWrite(t, dir, version(3, "a.yml", "b.yml", "sub/d.yml"), WriteOptions{})
	want := "update a.yml\nupdate b.yml\ndelete c/new.yml\nupdate sub/d.yml\n"
	if got := planString(plan); got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	if exists(dir, journalPath("t")) {
		t.Error("the journal outlived a completed install")
	}
	if exists(dir, "c") {
		t.Error("the directory of the deleted file was left")
	}
	if drifts, err := Check(dir, version(3, "a.yml", "b.yml", "sub/d.yml")); err != nil || len(drifts) != 0 {
		t.Errorf("after recovery: drift %+v, %v", drifts, err)
	}
}

func TestWriteFinishesAnInterruptedInstallOfTheSameOutput(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, version(1, "a.yml", "b.yml"), WriteOptions{})
	v2 := version(2, "a.yml", "b.yml")
	writeFile(t, dir, journalPath("t"), string(encodeLedger("t", ledgerRowsOf(v2))), 0o644)
	writeFile(t, dir, "a.yml", string(v2.Files[0].Data), 0o644)
	if got := planString(mustWrite(t, dir, v2, WriteOptions{})); got != "unchanged a.yml\nupdate b.yml\n" {
		t.Errorf("plan: %s", got)
	}
	if exists(dir, journalPath("t")) {
		t.Error("journal left")
	}
	if got := readFile(t, dir, ledgerPath("t")); got != string(encodeLedger("t", ledgerRowsOf(v2))) {
		t.Errorf("ledger is not version 2's:\n%s", got)
	}
}

// ledgerRowsOf is what a ledger or journal records for out.
func ledgerRowsOf(out *Output) []ledgerRow {
	rows := make([]ledgerRow, len(out.Files))
	for i, f := range out.Files {
		rows[i] = ledgerRow{path: f.Path, hash: sha(string(f.Data)), mode: modeString(f.Mode)}
	}
	return rows
}

// failingRename makes the nth call of rename (1-based) fail, and counts the calls.
func failingRename(t *testing.T, n int) *int {
	t.Helper()
	calls := 0
	rename = func(from, to string) error {
		calls++
		if calls == n {
			return errors.New("injected failure")
		}
		return renameFile(from, to)
	}
	t.Cleanup(func() { rename = renameFile })
	return &calls
}

func TestWriteErrorBeforeTheFirstFileLeavesTheDirectoryAsItWas(t *testing.T) {
	t.Run("fresh directory", func(t *testing.T) {
		dir := t.TempDir()
		failingRename(t, 2) // the journal's rename succeeds, the first file's fails
		if _, err := Write(dir, version(1, "deep/er/a.yml", "b.yml"), WriteOptions{}); err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("got %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("left behind %v", entries)
		}
	})
	t.Run("existing install", func(t *testing.T) {
		dir := t.TempDir()
		mustWrite(t, dir, version(1, "a.yml", "old.yml"), WriteOptions{})
		before := snapshot(t, dir)
		failingRename(t, 2)
		if _, err := Write(dir, version(2, "a.yml", "new/b.yml"), WriteOptions{}); err == nil {
			t.Fatal("no error")
		}
		sameTree(t, before, snapshot(t, dir))
	})
}

// TestWriteSurvivesAFailureAtEveryStep fails the install of version 2 at each rename in turn, then
// fails version 3 at each rename in turn, and checks that version 4 always installs without a
// single conflict and leaves exactly version 4: no state an interrupted install leaves makes a
// generated file look hand-edited.
func TestWriteSurvivesAFailureAtEveryStep(t *testing.T) {
	v1 := version(1, "a.yml", "b/c.yml", "gone.yml")
	v2 := version(2, "a.yml", "b/c.yml", "d/e.yml")
	v3 := version(3, "a.yml", "d/e.yml", "f.yml")
	v4 := version(4, "a.yml", "b/c.yml", "f.yml")
	for k2 := 1; k2 <= 6; k2++ {
		for k3 := 0; k3 <= 6; k3++ {
			t.Run(fmt.Sprintf("v2@%d/v3@%d", k2, k3), func(t *testing.T) {
				dir := t.TempDir()
				mustWrite(t, dir, v1, WriteOptions{})
				failingRename(t, k2)
				_, err2 := Write(dir, v2, WriteOptions{})
				if k3 > 0 {
					failingRename(t, k3)
					if _, err := Write(dir, v3, WriteOptions{}); err != nil && !strings.Contains(err.Error(), "injected") {
						t.Fatalf("v3: %v", err)
					}
				}
				rename = renameFile
				if err2 != nil && !strings.Contains(err2.Error(), "injected") {
					t.Fatalf("v2: %v", err2)
				}
				mustWrite(t, dir, v4, WriteOptions{})
				drifts, err := Check(dir, v4)
				if err != nil || len(drifts) != 0 {
					t.Errorf("v4 not installed: %+v %v", drifts, err)
				}
				for _, p := range []string{"gone.yml", "d/e.yml", "d", journalPath("t")} {
					if exists(dir, p) {
						t.Errorf("%s left behind", p)
					}
				}
				if stages, _ := filepath.Glob(filepath.Join(dir, ".autonomy", "stage-*")); len(stages) != 0 {
					t.Errorf("staging left behind: %v", stages)
				}
			})
		}
	}
}

// benchOutput is a fleet of n small generated files spread over 100 directories.
func benchOutput(n int) *Output {
	files := make([]File, n)
	for i := range files {
		files[i] = gen(fmt.Sprintf("d%02d/f%05d.yml", i%100, i), fmt.Sprintf("name: %d\non: push\n", i))
	}
	return output("bench", files...)
}

func BenchmarkWrite(b *testing.B) {
	out := benchOutput(10_000)
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		root := b.TempDir()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := filepath.Join(root, fmt.Sprint(i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := Write(dir, out, WriteOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		dir := b.TempDir()
		if _, err := Write(dir, out, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			plan, err := Write(dir, out, WriteOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if plan[0].Op != Keep {
				b.Fatalf("rewrote %s", plan[0].Path)
			}
		}
	})
}

// TestLeftoverStageRemoved: a stage a crashed install left behind is removed by the next install.
func TestLeftoverStageRemoved(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".autonomy/stage-123/0", "half a copy", 0o644)
	mustWrite(t, dir, output("t", gen("a.yml", "a: 1\n")), WriteOptions{})
	if exists(dir, ".autonomy/stage-123") {
		t.Fatal("the leftover stage is still there")
	}
	if !exists(dir, "a.yml") {
		t.Fatal("the install did not happen")
	}
}
