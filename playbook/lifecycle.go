package playbook

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook/capsule"
)

// capsuleAt is the capsule playbook at behaviorFile (relative to the profile directory), or nil.
func (pp *ProfilePlaybooks) capsuleAt(p *ir.Profile, behaviorFile string) *capsule.Playbook {
	if pp == nil || pp.Result == nil {
		return nil
	}
	want := filepath.Clean(filepath.Join(p.Dir, filepath.FromSlash(behaviorFile)))
	for _, c := range pp.Result.Capsules {
		if filepath.Clean(c.File) == want {
			return c
		}
	}
	return nil
}

// Lifecycle says what a new run of the capsule behavior at behaviorFile follows (seed 000):
// nothing when it is draft or active; when it is superseded, its successor (the end of its
// superseded_by: chain, a playbook of the profile's library), whose verification method the run
// is held to; when it, or the end of its chain, is archived, no new run. method is the
// verification method a new run is held to.
func (pp *ProfilePlaybooks) Lifecycle(p *ir.Profile, behaviorFile string) (lc *resolved.Lifecycle, method string) {
	c := pp.capsuleAt(p, behaviorFile)
	if c == nil {
		return nil, ""
	}
	at := fmt.Sprintf("%s:%d:%d", c.File, c.Status.Pos.Line, c.Status.Pos.Col)
	switch c.LifecycleStatus() {
	case "archived":
		return &resolved.Lifecycle{Status: "archived", At: at, Reason: fmt.Sprintf("its behavior %s is archived (status: archived at %s): an archived playbook starts no new run", behaviorFile, at)}, c.Verification.Value
	case "superseded":
	default:
		return nil, c.Verification.Value
	}
	next, chain := capsule.Successor(pp.Result.Capsules, c)
	names := make([]string, len(chain))
	for i, q := range chain {
		names[i] = pp.rel(p, q.File)
	}
	lc = &resolved.Lifecycle{Status: "superseded", At: at, Chain: strings.Join(names, " → ")}
	if next == nil {
		lc.Status, lc.Reason = "archived", fmt.Sprintf("its behavior %s is superseded (%s), and its superseded_by: chain %s resolves to no successor: no new run starts", behaviorFile, at, lc.Chain)
		return lc, ""
	}
	switch {
	case next.LifecycleStatus() == "archived":
		lc.Status, lc.Reason = "archived", fmt.Sprintf("its behavior %s is superseded (%s) by %s, which is archived: no new run starts", behaviorFile, at, lc.Chain)
	case strings.HasPrefix(pp.rel(p, next.File), "../"):
		lc.Status, lc.Reason = "archived", fmt.Sprintf("its behavior %s is superseded (%s) by %s, outside the profile: no new run starts", behaviorFile, at, next.File)
	default:
		lc.Successor = pp.rel(p, next.File)
	}
	return lc, next.Verification.Value
}

// rel is file relative to the profile directory, slash-separated ("../…" when outside it).
func (pp *ProfilePlaybooks) rel(p *ir.Profile, file string) string {
	r, err := filepath.Rel(p.Dir, file)
	if err != nil {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(r)
}
