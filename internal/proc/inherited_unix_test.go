//go:build unix

package proc

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealInherited: a descriptor inherited without close-on-exec is marked close-on-exec, by
// close_range where there is one and from the list of descriptors where not; standard error
// is left as it is.
func TestSealInherited(t *testing.T) {
	for name, seal := range map[string]func() error{"SealInherited": SealInherited, "listed": sealListed} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "inherited"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fd := int(f.Fd())
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				t.Fatal(err)
			}
			stderrFlags, err := unix.FcntlInt(2, unix.F_GETFD, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := seal(); err != nil {
				t.Fatal(err)
			}
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("descriptor %d after %s: flags %#x, %v; want close-on-exec", fd, name, flags, err)
			}
			if flags, _ := unix.FcntlInt(2, unix.F_GETFD, 0); flags != stderrFlags {
				t.Errorf("standard error's flags changed: %#x -> %#x", stderrFlags, flags)
			}
		})
	}
}
