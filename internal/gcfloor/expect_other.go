//go:build !linux

package gcfloor

// adviseHugePages does nothing where the kernel has no transparent huge pages to advise.
func adviseHugePages([]byte) bool { return false }

func addressSpaceFree() bool { return false }
