package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTempEnv: codex and claude each run with a TMPDIR of their own, new, private and (for
// codex) outside CODEX_HOME even when CODEX_HOME is under the TMPDIR it was given; remove
// deletes it, with what the CLI left there.
func TestTempEnv(t *testing.T) {
	for _, name := range []string{"codex", "claude"} {
		t.Run(name, func(t *testing.T) { testTempEnv(t, name) })
	}
}

func testTempEnv(t *testing.T, name string) {
	parent := t.TempDir()
	env := []string{"PATH=/usr/bin", "TMPDIR=/elsewhere", "CODEX_HOME=" + filepath.Join(parent, "home", ".codex"), "TMPDIR=" + parent}
	p, ok := Lookup(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	out, remove, err := p.TempEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	var tmps []string
	for _, kv := range out {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmps = append(tmps, v)
		}
	}
	if len(tmps) != 1 || filepath.Dir(tmps[0]) != parent {
		t.Fatalf("TMPDIR = %q, want one new directory in %s", tmps, parent)
	}
	fi, err := os.Stat(tmps[0])
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v, mode %v; want a directory only its user can enter", tmps[0], err, fi.Mode())
	}
	if rel, _ := filepath.Rel(tmps[0], filepath.Join(parent, "home", ".codex")); !strings.HasPrefix(rel, "..") {
		t.Errorf("CODEX_HOME is under the new TMPDIR %s", tmps[0])
	}
	if !slices.Contains(out, "PATH=/usr/bin") || len(out) != len(env)-1 {
		t.Errorf("the rest of the env changed: %q", out)
	}
	// What Claude Code leaves there (a folder per working directory, its sandbox's sockets).
	if err := os.MkdirAll(filepath.Join(tmps[0], "claude-0", "-work-install", "session"), 0o700); err != nil {
		t.Fatal(err)
	}
	remove()
	if _, err := os.Stat(tmps[0]); !os.IsNotExist(err) {
		t.Errorf("remove left %s: %v", tmps[0], err)
	}
}
