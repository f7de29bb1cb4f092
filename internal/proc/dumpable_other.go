//go:build !linux

package proc

// NotDumpable does nothing outside Linux: on macOS a process of the same user can still read
// another's arguments and environment (sysctl KERN_PROCARGS2).
func NotDumpable() error { return nil }
