//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// initTrace runs autonomy version with GODEBUG=inittrace=1, which makes the runtime print each
// package's init allocations on stderr.
func initTrace(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(autonomyBin(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("autonomy version: %v\n%s", err, out)
	}
	return out
}

// TestStartupCompilesNoRegexp: autonomy's own packages compile their regular expressions on
// first use (sync.OnceValue), not at init: about a hundred of them were 1.1 MB of allocations
// and a fifth of the CPU of every process's start. (This package, cmd/autonomy, is left out:
// its tests' globals are linked in the test binary.)
func TestStartupCompilesNoRegexp(t *testing.T) {
	total := 0
	for _, m := range regexp.MustCompile(`(?m)^init (github\.com/autonomyhq/autonomy/\S*) @.*, ([0-9]+) bytes, [0-9]+ allocs$`).FindAllSubmatch(initTrace(t), -1) {
		if string(m[1]) == "github.com/autonomyhq/autonomy/cmd/autonomy" {
			continue
		}
		n, _ := strconv.Atoi(string(m[2]))
		total += n
	}
	if total > 256<<10 {
		t.Errorf("autonomy's packages allocated %d bytes at init, want under 256 KiB: compile regular expressions on first use (sync.OnceValue)", total)
	}
}

// TestStartupDoesLittleAtInit: no package of autonomy's allocates 16 KiB at init: what a
// package needs for some commands it builds on first use (sync.OnceValue), not in every process.
// gh-actions' substrate read and parsed the binary's build information and marshalled JSON at
// init (18 KB).
func TestStartupDoesLittleAtInit(t *testing.T) {
	for _, m := range regexp.MustCompile(`(?m)^init (github\.com/autonomyhq/autonomy/\S*) @.*, ([0-9]+) bytes, [0-9]+ allocs$`).FindAllSubmatch(initTrace(t), -1) {
		if n, _ := strconv.Atoi(string(m[2])); string(m[1]) != "github.com/autonomyhq/autonomy/cmd/autonomy" && n >= 16<<10 {
			t.Errorf("%s allocated %d bytes at init, want under 16 KiB: build what some commands need on first use (sync.OnceValue)", m[1], n)
		}
	}
}

// TestStartupCollectsNoGarbage: a process starts without a garbage collection (package gcfloor):
// the packages' init allocations crossed the runtime's first heap goal, a collection cycle before
// main in every command and every session's supervisor, a sixth of a launch's CPU.
func TestStartupCollectsNoGarbage(t *testing.T) {
	cmd := exec.Command(autonomyBin(t), "version")
	for _, kv := range os.Environ() {
		if !regexp.MustCompile(`^(GOGC|GOMEMLIMIT|GODEBUG)=`).MatchString(kv) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("autonomy version: %v\n%s", err, out)
	}
	if cycles := regexp.MustCompile(`(?m)^gc [0-9]+ @.*$`).FindAll(out, -1); len(cycles) > 0 {
		t.Errorf("autonomy version ran %d garbage collection(s), want none below gcfloor.Floor:\n%s", len(cycles), bytes.Join(cycles, []byte("\n")))
	}
}

// TestStartupCompilesNoJSONSchema: no JSON Schema library the command links compiles
// metaschemas at init. The one autonomy used (santhosh-tekuri/jsonschema) compiled its drafts'
// metaschemas in init(), 1.7 MB and 2.4 ms in every process, twice per launch; autonomy's own
// validator (internal/jsonschema) does no init work, and google/jsonschema-go, which the MCP SDK
// links, allocates about 80 KB. Only the command's packages count (go list -deps): this test
// binary also links what other tests use.
func TestStartupCompilesNoJSONSchema(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/autonomyhq/autonomy/cmd/autonomy").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^init (\S*jsonschema\S*) @.*, ([0-9]+) bytes, [0-9]+ allocs$`).FindAllSubmatch(initTrace(t), -1) {
		if n, _ := strconv.Atoi(string(m[2])); linked[string(m[1])] && n > 128<<10 {
			t.Errorf("%s allocated %d bytes at init, want under 128 KiB: a JSON Schema library that compiles metaschemas at init costs every process", m[1], n)
		}
	}
}
