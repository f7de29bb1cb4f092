package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

const (
	// HeapPerProfileByte is about how many bytes of heap validate and compile build for each
	// byte of a profile (measured 82 for validate and 118 for a gh-actions compile at 10,000
	// actors, docs/performance.md).
	HeapPerProfileByte = 96
	// ExpectMin is the least heap Expect acts on: below it the process touches too little memory
	// for its page faults to matter (a profile of about 300 actors reaches it).
	ExpectMin = 8 << 20
	// ExpectMax is the most Expect asks for at once: half of OneShotLimit, so the free memory it
	// leaves never brings the collector near the limit by itself.
	ExpectMax = OneShotLimit / 2
)

// Expect tells a one-shot command (OneShot) that it is about to build a heap of about n bytes
// (a large profile's validate or compile). Each 4 KiB page a process touches for the first time
// is a page fault, and on some virtual machines a costly one (about 15 µs where memory is
// shadow-paged: a third of a 10,000-actor compile's CPU). So the heap asks the runtime for all
// of it at once, advises the kernel to back it with transparent huge pages (madvise
// MADV_HUGEPAGE, on Linux; where the system's THP mode is "madvise" the runtime's heap otherwise
// never gets them), and frees it for the command's own allocations: each first touch then maps
// 2 MiB. Nothing is touched here, so a smaller heap than expected costs address space only.
//
// It does nothing below ExpectMin, outside a one-shot command, on systems without the call, or
// with GODEBUG=disablethp=1 (Go's own switch against huge pages for the heap), nor where address
// space is not free (a limit on it, ulimit -v, or vm.overcommit_memory 2: there the room asked
// for and never used could make the runtime fail the command for want of memory). It returns how
// many bytes it advised (0: none). It acts once a process: a validate of several profiles builds
// each one's heap where the one before it was.
func Expect(n int64) int64 {
	after.Lock()
	// Half of the memory limit at most (the operator's GOMEMLIMIT, or OneShotLimit, the one
	// the floor gives way to): the free memory it leaves must not bring the collector near the
	// limit by itself.
	limit := debug.SetMemoryLimit(-1)
	if after.armed {
		limit = after.limit
	}
	n = min(n, ExpectMax, limit/2)
	act := after.oneShot && !after.expected && n >= ExpectMin && !thpDisabled(os.Getenv("GODEBUG")) && addressSpaceFree()
	after.expected = after.expected || act
	after.Unlock()
	if !act {
		return 0
	}
	b := make([]byte, n)
	ok := adviseHugePages(b)
	b = nil //nolint:ineffassign // dropped before the collection that frees it
	runtime.GC()
	if !ok {
		return 0
	}
	return n
}

// thpDisabled reports whether godebug (GODEBUG's value) turns huge pages off: its last
// disablethp setting, as the runtime reads it.
func thpDisabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "disablethp" {
			off = v != "0"
		}
	}
	return off
}
