//go:build unix && !linux

package substrates

// flushStaged makes the staged files durable: a parallel sync pass.
func flushStaged(_ string, paths []string) error { return fsyncAll(paths) }
