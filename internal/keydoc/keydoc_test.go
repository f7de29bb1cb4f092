package keydoc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTableKeys(t *testing.T) {
	md := []byte("# doc\n\n## `policy.box.x`\n\nSome prose with `code`.\n\n| key | default | what |\n|---|---|---|\n" +
		"| `a` | `1` | the `b` in it is not a key |\n| `c`, `d` | none | two keys |\n\nAfter.\n\n| `e` | | another table |\n")
	got, err := TableKeys(md, "## `policy.box.x`")
	if err != nil || !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := TableKeys(md, "## `policy.box.y`"); err == nil {
		t.Error("a missing heading: no error")
	}
	if _, err := TableKeys([]byte("## h\n\nprose\n\n## next\n\n| `a` |\n"), "## h"); err == nil {
		t.Error("a heading without a table: no error")
	}
}

func TestSwitchKeys(t *testing.T) {
	dir := t.TempDir()
	src := `package p

func read(k, v struct{ Value string }) {
	switch k.Value {
	case "a", "b":
		switch v.Value {
		case "not a key":
		}
	case "c":
	}
}

func other(k struct{ Value string }) {
	switch k.Value {
	case "d":
	}
}

func more(k string) {
	switch k {
	case "a", "e":
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc read2(k struct{ Value string }) {\n\tswitch k.Value {\n\tcase \"t\":\n\t}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := SwitchKeys(dir, "read", "more")
	if err != nil || !slices.Equal(got, []string{"a", "b", "c", "e"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := SwitchKeys(dir, "read", "gone"); err == nil {
		t.Error("a missing function: no error")
	}
}

func TestMentions(t *testing.T) {
	got := Mentions("set policy.box.local.timezone, or policy.box.local.max_x. Not policy.box.localx or policy.box.local. Again policy.box.local.timezone", "policy.box.local.")
	if !slices.Equal(got, []string{"timezone", "max_x"}) {
		t.Errorf("got %v", got)
	}
}

func TestRepoMentions(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"README.md": "x.a and x.b", "docs/one.md": "x.b, x.c", "docs/skip.txt": "x.d"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := RepoMentions(root, "x.")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := RepoMentions(t.TempDir(), "x."); err == nil {
		t.Error("no README.md: no error")
	}
}
