package ir

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Target is what a substrate declares to the standard: the target name profiles write, its
// accepted alternative spellings, and the policy.box keys it owns. ir knows no substrate by
// name; the substrate registry (substrates/registry) registers each substrate's Target, in its
// order, before any profile is validated.
type Target struct {
	// Name is the target name (e.g. the one written in targets:).
	Name string
	// Aliases are deprecated spellings of Name: validate accepts them with a warning. Each also
	// names a policy.box key the substrate owns, the deprecated name of its section.
	Aliases []string
	// Short are plain other names of Name (kubernetes's k8s): accepted wherever Name is, in
	// targets: and as a policy.box key, without a warning.
	Short []string
	// Box is the JSON Schema of policy.box.<Name>, the section the substrate owns; nil means any
	// mapping (or null).
	Box map[string]any
}

var (
	targetsMu  sync.Mutex
	registered atomic.Pointer[[]Target]
)

// RegisterTarget adds t to the targets profiles may declare, after those registered before,
// and returns a function that removes it again (for a test that registers a substrate of its
// own). A name registered again replaces the earlier registration, in its place.
func RegisterTarget(t Target) (unregister func()) {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	next := slices.Clone(RegisteredTargets())
	if i := slices.IndexFunc(next, func(o Target) bool { return o.Name == t.Name }); i >= 0 {
		next[i] = t
	} else {
		next = append(next, t)
	}
	registered.Store(&next)
	return func() {
		targetsMu.Lock()
		defer targetsMu.Unlock()
		rest := slices.DeleteFunc(slices.Clone(RegisteredTargets()), func(o Target) bool { return o.Name == t.Name })
		registered.Store(&rest)
	}
}

// RegisteredTargets lists the registered targets, in registration order. The slice must not be
// modified.
func RegisteredTargets() []Target {
	if p := registered.Load(); p != nil {
		return *p
	}
	return nil
}

// Targets names the targets a profile may declare, in registration order.
func Targets() []string {
	var out []string
	for _, t := range RegisteredTargets() {
		out = append(out, t.Name)
	}
	return out
}

// TargetAlias returns the target name alias stands for, if it is a registered alias.
func TargetAlias(alias string) (string, bool) {
	for _, t := range RegisteredTargets() {
		if slices.Contains(t.Aliases, alias) {
			return t.Name, true
		}
	}
	return "", false
}

// TargetShort returns the target name short stands for, if it is a registered short name
// (a plain alias, not a deprecated one).
func TargetShort(short string) (string, bool) {
	for _, t := range RegisteredTargets() {
		if slices.Contains(t.Short, short) {
			return t.Name, true
		}
	}
	return "", false
}

// targetSpellings is every registered name, then every short name and alias: what targets:
// accepts.
func targetSpellings() []string {
	out := Targets()
	for _, t := range RegisteredTargets() {
		out = append(out, t.Short...)
		out = append(out, t.Aliases...)
	}
	return out
}

// ownedBoxKeys are the policy.box keys the registered targets own: each name, short name and
// alias.
func ownedBoxKeys() []string {
	var out []string
	for _, t := range RegisteredTargets() {
		out = append(out, t.Name)
		out = append(out, t.Short...)
		out = append(out, t.Aliases...)
	}
	return out
}

// targetsExample is the hint for a missing or malformed targets: every registered name.
func targetsExample() string {
	return "e.g. targets: [" + strings.Join(Targets(), ", ") + "]"
}
