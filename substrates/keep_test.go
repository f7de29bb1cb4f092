package substrates

import (
	"reflect"
	"strings"
	"testing"
)

// A file of Output.Keep that is on disk with other content is the user's: Write leaves it, says
// so in the plan, does not record it as generated, and Check does not count it as drift.
func TestWriteKeepsTheUsersFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".gitignore", "node_modules/\n", 0o644)
	out := output("t", verbatim(".gitignore", "/.autonomy/\n", 0o644), gen("a.yml", "a\n"))

	// Without keep: refused, and the hint names the way out.
	cs := conflicts(t, dir, out, WriteOptions{})
	if len(cs) != 1 || cs[0].Path != ".gitignore" || !strings.Contains(cs[0].Hint, "--keep .gitignore") {
		t.Fatalf("conflicts %+v, want one on .gitignore naming --keep .gitignore", cs)
	}

	out.Keep = []string{".gitignore"}
	plan := mustWrite(t, dir, out, WriteOptions{})
	if got, want := planString(plan), "kept .gitignore\ncreate a.yml\n"; got != want {
		t.Errorf("plan:\n%swant:\n%s", got, want)
	}
	if got := readFile(t, dir, ".gitignore"); got != "node_modules/\n" {
		t.Errorf(".gitignore = %q, want the user's", got)
	}
	if got := ledgerPaths(t, dir, "t"); !reflect.DeepEqual(got, []string{"a.yml"}) {
		t.Errorf("ledger records %v, want only a.yml", got)
	}
	drifts, err := Check(dir, out)
	if err != nil || len(drifts) != 0 {
		t.Errorf("Check = %+v, %v; want no drift", drifts, err)
	}
	// A second run is a no-op, and dropping the keep brings the refusal back: the file was
	// never recorded as autonomy's, so even --force leaves it.
	if got := planString(mustWrite(t, dir, out, WriteOptions{})); got != "kept .gitignore\nunchanged a.yml\n" {
		t.Errorf("second plan:\n%s", got)
	}
	out.Keep = nil
	if cs := conflicts(t, dir, out, WriteOptions{Force: true}); len(cs) != 1 || cs[0].Path != ".gitignore" {
		t.Errorf("conflicts without keep %+v", cs)
	}
	// A kept path that is not on disk is created as any other file.
	out.Keep = []string{"b.md"}
	out2 := output("t", verbatim(".gitignore", "node_modules/\n", 0o644), gen("a.yml", "a\n"), verbatim("b.md", "b\n", 0o644))
	out2.Keep = out.Keep
	if got := planString(mustWrite(t, dir, out2, WriteOptions{})); got != "unchanged .gitignore\nunchanged a.yml\ncreate b.md\n" {
		t.Errorf("plan with an absent kept file:\n%s", got)
	}
}

// A header that names the profile by another path over the same body is no drift: check from an
// identical copy of the profile in another folder is clean.
func TestCheckIgnoresTheProfilePathOfAnIdenticalBody(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir, output("t", gen("a.yml", "a\n")), WriteOptions{})
	other := Output{Target: "t", Files: []File{{Path: "a.yml", Data: []byte("a\n"), Mode: 0o644, Header: HashHeader}}}
	Stamp(&other, "copy/ir.yml")
	if drifts, err := Check(dir, &other); err != nil || len(drifts) != 0 {
		t.Errorf("Check = %+v, %v; want no drift", drifts, err)
	}
	changed := Output{Target: "t", Files: []File{{Path: "a.yml", Data: []byte("b\n"), Mode: 0o644, Header: HashHeader}}}
	Stamp(&changed, "copy/ir.yml")
	if drifts, err := Check(dir, &changed); err != nil || len(drifts) != 1 || drifts[0].Kind != Changed {
		t.Errorf("Check = %+v, %v; want a.yml changed", drifts, err)
	}
}
