// Package gctune sets the garbage collector for a one-shot command that builds a large heap and
// keeps most of it to the end (validate, check and compile of a large fleet: the profile, the
// compiled files): with Go's default GOGC=100 each collection scans again everything still live,
// about a fifth of such a command's CPU at 5,000 actors. docs/performance.md has the figures.
package gctune

import (
	"os"
	"runtime/debug"
)

const (
	// Percent is a one-shot command's GOGC: the heap grows to five times what survived the last
	// collection before the next one.
	Percent = 400
	// Limit is the soft memory limit beside it (GOMEMLIMIT): near it the collector runs as
	// often as it must to stay under, as with the default GOGC, so a fleet large enough to reach
	// it costs no more memory than before.
	Limit = 1 << 30
)

// OneShot sets Percent and Limit for the rest of the process, each unless the environment sets
// it (GOGC, GOMEMLIMIT): a user's own tuning wins. Only commands that exit when done call it.
func OneShot() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(Percent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(Limit)
	}
}
