// Package gcfloor lets an autonomy process start without a garbage collection: the collector
// stays off until the process first holds Floor bytes, then paces as it would have (GOGC=100).
//
// Every autonomy process pays its dependencies' package initialization (a JSON Schema library
// compiling its drafts' metaschemas, the Kubernetes client's type registry): about 4 MB
// allocated, 1 MB of it kept, which crosses the runtime's first heap goal of 4 MB. That was a
// collection cycle before main in every CLI command and every session's supervisor, a sixth of
// a launch's CPU, to free memory a short process hands back at exit anyway. cmd/autonomy imports
// this package for its init, which runs before those packages' (packages initialize in the order
// of their import paths, each after its imports). A process that grows past Floor collects then,
// and from that first cycle on the collector runs with the runtime's defaults. GOGC or GOMEMLIMIT
// in the environment are the operator's choice: with either set, nothing changes.
package gcfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// Floor is the memory (the runtime's total, as GOMEMLIMIT counts it) a process may reach before
// its first collection. A long-running process (a supervisor, serve) holds at most this much
// more than before until then.
const Floor = 16 << 20

func init() { arm(os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT")) }

// arm turns the collector off below Floor until its first cycle, unless gogc or memlimit (the
// environment's GOGC and GOMEMLIMIT) is set. It returns nil when it did nothing, else a channel
// closed once the first cycle has put the runtime's defaults back.
func arm(gogc, memlimit string) <-chan struct{} {
	if gogc != "" || memlimit != "" {
		return nil
	}
	done := make(chan struct{})
	debug.SetMemoryLimit(Floor)
	debug.SetGCPercent(-1)
	// The first cycle finds the sentinel unreachable and queues its finalizer, which puts the
	// defaults back: GOGC=100 and no memory limit.
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		close(done)
	})
	return done
}
