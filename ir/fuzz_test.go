package ir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader and validator: they must never panic, and every
// diagnostic must be positioned and sorted. Bounded time comes from the alias budget and the
// linear passes; a hang shows up as a fuzz timeout.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("../profiles/*/ir.yml")
	bad, _ := filepath.Glob("testdata/*/*.yml")
	for _, file := range append(seeds, bad...) {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(minimal))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("<<: {x: 1}\n"))
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "skills", "hello"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "hello", "SKILL.md"), []byte("hi"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, diags := Parse("ir.yml", dir, data)
		if p != nil {
			diags = append(diags, Validate(p)...).Sort()
		}
		if p == nil && !diags.HasErrors() {
			t.Fatalf("no profile and no error")
		}
		for i, d := range diags {
			if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Message == "" {
				t.Fatalf("unpositioned or empty diagnostic: %#v", d)
			}
			if strings.Contains(d.Message, "%!") {
				t.Fatalf("bad format verb: %s", d.Message)
			}
			if i > 0 {
				prev := diags[i-1].Pos
				if prev.Line > d.Pos.Line || prev.Line == d.Pos.Line && prev.Col > d.Pos.Col {
					t.Fatalf("unsorted diagnostics: %v before %v", prev, d.Pos)
				}
			}
		}
	})
}
