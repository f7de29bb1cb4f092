package gcfloor

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// adviseHugePages advises the kernel to back b's pages with transparent huge pages.
func adviseHugePages(b []byte) bool {
	return len(b) > 0 && unix.Madvise(b, unix.MADV_HUGEPAGE) == nil
}

// addressSpaceFree reports whether the process may map n bytes more than it needs without
// risking the runtime's fatal "out of memory" (an allocation that fails is not recoverable):
// not under a limit on its address space (ulimit -v, RLIMIT_AS), and not where the kernel counts
// every writable private mapping against a commit limit (vm.overcommit_memory 2).
func addressSpaceFree() bool {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &lim); err != nil || lim.Cur != unix.RLIM_INFINITY {
		return false
	}
	mode, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && !strictOvercommit(string(mode))
}

// strictOvercommit reports whether vm.overcommit_memory's value is 2 (never overcommit).
func strictOvercommit(mode string) bool { return strings.TrimSpace(mode) == "2" }
