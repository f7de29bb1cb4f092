//go:build !linux

package proc

// PidNS names this process's pid namespace; there are none but Linux's, and it is 0.
func PidNS() (uint64, error) { return 0, nil }
