package gcfloor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestExpectAdvisesTheHeapItWillUse: in a one-shot command's process, the heap Expect made room
// for is advised for huge pages (the kernel shows the advice as "hg" among the mapping's
// VmFlags, whatever the system's THP mode), and the command's next large allocation lands in it.
// It runs in a process of its own: the heap of this one has a history.
func TestExpectAdvisesTheHeapItWillUse(t *testing.T) {
	if !inChild(t, "GODEBUG=") {
		return
	}
	OneShot()
	if Expect(ExpectMin) != ExpectMin {
		t.Fatal("Expect advised nothing in a one-shot command")
	}
	if Expect(ExpectMin) != 0 {
		t.Error("Expect acted twice in one process")
	}
	b := make([]byte, ExpectMin/2)
	flags, err := vmFlags(uintptr(unsafe.Pointer(&b[0])))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("the heap's next allocation is in a mapping with VmFlags %q: no huge-page advice (hg)", flags)
	}
}

// TestExpectUnderTheFloorCountsTheLimitToCome: while the floor holds (its limit is Floor, 16 MiB),
// Expect counts the limit the floor gives way to (OneShotLimit), not the floor's.
func TestExpectUnderTheFloorCountsTheLimitToCome(t *testing.T) {
	if !inChild(t, "GODEBUG=", "GOGC=", "GOMEMLIMIT=") {
		return
	}
	if !after.armed {
		t.Fatal("the floor is not armed in a fresh process")
	}
	OneShot()
	if got := Expect(4 * Floor); got != 4*Floor {
		t.Fatalf("Expect(%d) under the floor (limit %d) advised %d bytes, want all of them: the limit to come is %d", 4*Floor, Floor, got, OneShotLimit)
	}
}

// inChild reports whether this is the test's own process (GCFLOOR_EXPECT_CHILD set): the tests
// of a fresh heap run there. Otherwise it runs the test t in one, with env (settings cleared so
// that the child starts as a command does), fails t if that fails, and reports false.
func inChild(t *testing.T, env ...string) bool {
	if os.Getenv("GCFLOOR_EXPECT_CHILD") != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "GCFLOOR_EXPECT_CHILD=1"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return false
}

// vmFlags is the VmFlags line of the mapping of this process that holds addr (/proc/self/smaps).
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, _, _ := strings.Cut(line, " "); !strings.HasSuffix(k, ":") { // a mapping's first line: "lo-hi perms ..."
			var lo, hi uintptr
			if _, err := fmt.Sscanf(k, "%x-%x", &lo, &hi); err != nil {
				return "", fmt.Errorf("/proc/self/smaps: %q: %v", line, err)
			}
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping of /proc/self/smaps holds %#x", addr)
}

// TestExpectUnderAnAddressSpaceLimit: under ulimit -v (RLIMIT_AS) Expect asks for nothing: the
// room it asks for at once is more than the command may map there, and the runtime fails an
// allocation it cannot map with a fatal "out of memory" (the command crashed before it read the
// profile). It runs in a process of its own, under a limit of 256 MiB above what it has mapped.
func TestExpectUnderAnAddressSpaceLimit(t *testing.T) {
	if !inChild(t, "GODEBUG=", "GOGC=", "GOMEMLIMIT=") {
		return
	}
	size, err := vmSize()
	if err != nil {
		t.Fatal(err)
	}
	limit := uint64(size) + 256<<20
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Fatal(err)
	}
	OneShot()
	if got := Expect(ExpectMax); got != 0 {
		t.Fatalf("Expect(%d) under an address-space limit of %d bytes advised %d bytes", ExpectMax, limit, got)
	}
}

func TestStrictOvercommit(t *testing.T) {
	for mode, want := range map[string]bool{"2\n": true, "0\n": false, "1\n": false, "": false} {
		if got := strictOvercommit(mode); got != want {
			t.Errorf("strictOvercommit(%q) = %v, want %v", mode, got, want)
		}
	}
}

// vmSize is this process's VmSize (/proc/self/status), in bytes.
func vmSize() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("VmSize %q: %v", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
