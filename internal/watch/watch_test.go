package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFingerprintSeesEveryKindOfChange(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ir.yml", "a\n")
	seen := map[string]bool{}
	fp := func(what string) {
		t.Helper()
		f, err := Fingerprint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if seen[f] {
			t.Errorf("%s: the fingerprint did not change", what)
		}
		seen[f] = true
	}
	fp("start")
	write("ir.yml", "ab\n")
	fp("resized")
	write("skills/x/SKILL.md", "x\n")
	fp("added")
	if err := os.Chmod(filepath.Join(dir, "ir.yml"), 0o600); err != nil {
		t.Fatal(err)
	}
	fp("mode")
	if err := os.Rename(filepath.Join(dir, "skills/x/SKILL.md"), filepath.Join(dir, "skills/x/OTHER.md")); err != nil {
		t.Fatal(err)
	}
	fp("renamed")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "ir.yml"), past, past); err != nil {
		t.Fatal(err)
	}
	fp("rewritten (modification time)")
	if _, err := Fingerprint(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory has a fingerprint")
	}
}

// Poll reports a change once and stops, returning nil, when its context ends.
func TestPollReportsAChangeAndStops(t *testing.T) {
	dir := t.TempDir()
	from, err := Fingerprint(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() { done <- Poll(ctx, dir, time.Millisecond, from, func() { changes <- struct{}{} }) }()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	<-changes
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Poll: %v", err)
	}
	if n := len(changes); n != 0 {
		t.Errorf("%d more changes reported for one", n)
	}
	if err := Poll(context.Background(), filepath.Join(dir, "missing"), time.Millisecond, from, func() {}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Poll of a missing directory: %v", err)
	}
}
