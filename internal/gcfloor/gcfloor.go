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
//
// A one-shot command that builds a large heap and keeps most of it to the end (validate, check
// and compile of a large fleet: the profile, the compiled files) calls OneShot: with Go's default
// GOGC=100 each collection scans again everything still live, about a fifth of such a command's
// CPU at 5,000 actors (docs/performance.md has the figures), so from the first cycle on it runs
// with OneShotPercent under a soft limit of OneShotLimit instead of the defaults.
package gcfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

const (
	// OneShotPercent is a one-shot command's GOGC: the heap grows to five times what survived
	// the last collection before the next one.
	OneShotPercent = 400
	// OneShotLimit is the soft memory limit beside it (GOMEMLIMIT): near it the collector runs
	// as often as it must to stay under, as with the default GOGC, so a fleet large enough to
	// reach it costs no more memory than before.
	OneShotLimit = 1 << 30
)

// after holds what the collector runs with once the floor is lifted; armed says the floor is
// still in place (its finalizer applies after when it runs).
var after = struct {
	sync.Mutex
	armed    bool
	oneShot  bool // OneShot was called: Expect may act
	expected bool // Expect acted
	percent  int
	limit    int64
}{percent: 100, limit: math.MaxInt64}

// OneShot sets OneShotPercent and OneShotLimit for the rest of the process, each unless the
// environment sets it (GOGC, GOMEMLIMIT): a user's own tuning wins. While the floor holds, it
// holds on, and these replace the defaults it puts back at the first cycle. Only commands that
// exit when done call it.
func OneShot() {
	// Set and empty is unset, as the runtime reads them.
	gogc, memlimit := os.Getenv("GOGC") != "", os.Getenv("GOMEMLIMIT") != ""

	after.Lock()
	defer after.Unlock()
	after.oneShot = true
	if !gogc {
		after.percent = OneShotPercent
	}
	if !memlimit {
		after.limit = OneShotLimit
	}
	if after.armed {
		return
	}
	if !gogc {
		debug.SetGCPercent(after.percent)
	}
	if !memlimit {
		debug.SetMemoryLimit(after.limit)
	}
}

// lift puts after's settings in place of the floor.
func lift() {
	after.Lock()
	defer after.Unlock()
	after.armed = false
	debug.SetGCPercent(after.percent)
	debug.SetMemoryLimit(after.limit)
}

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
	after.Lock()
	after.armed = true
	after.Unlock()
	debug.SetMemoryLimit(Floor)
	debug.SetGCPercent(-1)
	// The first cycle finds the sentinel unreachable and queues its finalizer, which puts the
	// defaults back (GOGC=100 and no memory limit), or what OneShot asked for.
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		lift()
		close(done)
	})
	return done
}
