package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestStartupCompilesNoSchema: a process that validates no JSON Schema does not compile the
// JSON Schema drafts' metaschemas at start (third_party/jsonschema/PATCHES.md): upstream's
// package init allocated 1.7 MB doing so, in every autonomy process, twice per runner launch.
// GODEBUG=inittrace=1 makes the runtime print each package's init allocations.
func TestStartupCompilesNoSchema(t *testing.T) {
	cmd := exec.Command(autonomyBin(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("autonomy version: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^init github\.com/santhosh-tekuri/jsonschema/v6 @.*, ([0-9]+) bytes, ([0-9]+) allocs$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no init line for the jsonschema package:\n%s", out)
	}
	if n, _ := strconv.Atoi(string(m[1])); n > 64<<10 {
		t.Errorf("the jsonschema package's init allocated %d bytes (%s allocs), want under 64 KiB: the drafts are compiled on the first Compile", n, m[2])
	}
}
