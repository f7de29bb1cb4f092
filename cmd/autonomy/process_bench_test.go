package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkValidateProcess measures the whole process a user runs: `autonomy validate
// profiles/sdlc`, from exec to exit, with a binary built the way `make build` builds it.
// Target: under 20 ms per run.
func BenchmarkValidateProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "autonomy")
	if out, err := exec.Command("go", "build", "-trimpath", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for b.Loop() {
		if out, err := exec.Command(bin, "validate", "../../profiles/sdlc").CombinedOutput(); err != nil {
			b.Fatalf("validate: %v\n%s", err, out)
		}
	}
}
