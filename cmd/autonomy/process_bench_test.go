package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildBinary builds autonomy the way `make build` does.
func buildBinary(b testing.TB) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "autonomy")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkValidateProcess measures the whole process a user runs: `autonomy validate
// profiles/sdlc`, from exec to exit. Target: under 20 ms per run.
func BenchmarkValidateProcess(b *testing.B) {
	bin := buildBinary(b)
	for b.Loop() {
		if out, err := exec.Command(bin, "validate", "../../profiles/sdlc").CombinedOutput(); err != nil {
			b.Fatalf("validate: %v\n%s", err, out)
		}
	}
}

// BenchmarkCompileProcess measures `autonomy compile profiles/sdlc --target gh-actions --out DIR`
// from exec to exit, into an installation that is already up to date (the common case: CI and
// re-runs), after a first compile that created it. Target: under 30 ms per run.
func BenchmarkCompileProcess(b *testing.B) {
	bin := buildBinary(b)
	out := b.TempDir()
	args := []string{"compile", "../../profiles/sdlc", "--target", "gh-actions", "--out", out}
	if msg, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		b.Fatalf("compile: %v\n%s", err, msg)
	}
	for b.Loop() {
		if msg, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			b.Fatalf("compile: %v\n%s", err, msg)
		}
	}
}

// BenchmarkCompileProcessFresh is the same command into an empty directory each time: every
// file is created.
func BenchmarkCompileProcessFresh(b *testing.B) {
	bin := buildBinary(b)
	for b.Loop() {
		b.StopTimer()
		out := filepath.Join(b.TempDir(), "out")
		if err := exec.Command("mkdir", out).Run(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if msg, err := exec.Command(bin, "compile", "../../profiles/sdlc", "--target", "gh-actions", "--out", out).CombinedOutput(); err != nil {
			b.Fatalf("compile: %v\n%s", err, msg)
		}
	}
}
