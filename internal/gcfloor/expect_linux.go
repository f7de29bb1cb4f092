package gcfloor

import "golang.org/x/sys/unix"

// adviseHugePages advises the kernel to back b's pages with transparent huge pages.
func adviseHugePages(b []byte) bool {
	return len(b) > 0 && unix.Madvise(b, unix.MADV_HUGEPAGE) == nil
}
