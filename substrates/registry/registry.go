// Package registry lists the substrates autonomy can compile to, in a fixed order: an explicit
// slice, never init() self-registration, so the set and its order are visible in one place. It
// tells ir each substrate's target name, aliases and policy.box section (ir.RegisterTarget), so
// importing it is what makes a profile's targets valid. Adding a substrate is one line in all.
package registry

import (
	"slices"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghcmd"
	"github.com/autonomyhq/autonomy/substrates/kubernetes/kubecmd"
	"github.com/autonomyhq/autonomy/substrates/local/localcmd"
)

// all is every substrate, in order.
var all = []substrates.Substrate{
	// gh-actions: GitHub Actions, one workflow per actor; alias github.
	ghcmd.Substrate{},
	// local: one machine; autonomy itself is the runner and the trigger executor.
	localcmd.Substrate{},
	// kubernetes: a cluster; Jobs, CronJobs and RBAC from capabilities, a kustomization; alias k8s.
	kubecmd.Substrate{},
}

// OnThisMachine is the substrate a command that runs on this machine acts for when it is told
// none (autonomy playbook weave): the local runtime.
var OnThisMachine = localcmd.Substrate{}.Name()

var (
	mu      sync.RWMutex
	current = declare(all)
)

func declare(subs []substrates.Substrate) []substrates.Substrate {
	for _, s := range subs {
		ir.RegisterTarget(substrates.Declaration(s))
	}
	return subs
}

// All is every registered substrate, in order. The slice is the caller's.
func All() []substrates.Substrate {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(current)
}

// Register adds s after the registered substrates, and tells ir its declaration, until the
// returned function is called. It is for a test that proves a substrate of its own (a substrate
// of this build is a line in all); it must not run concurrently with a compile or validation
// that should not see s.
func Register(s substrates.Substrate) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	undo := ir.RegisterTarget(substrates.Declaration(s))
	current = append(slices.Clone(current), s)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		undo()
		current = slices.DeleteFunc(slices.Clone(current), func(o substrates.Substrate) bool { return o.Name() == s.Name() })
	}
}

// Lookup finds a substrate by its name, one of its short names or one of its aliases.
func Lookup(name string) (substrates.Substrate, bool) {
	for _, s := range All() {
		if s.Name() == name || slices.Contains(substrates.ShortNames(s), name) || slices.Contains(s.Aliases(), name) {
			return s, true
		}
	}
	return nil, false
}

// Names lists the registered substrates' names, in order.
func Names() []string {
	subs := All()
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Name()
	}
	return out
}
