package playproto

import (
	"fmt"
	"time"
)

// Actor is who a session weaves overlays for: its actor's name (role/, operator/), its
// behavior's name (skill/) and the substrate it runs on (runtime/).
type Actor struct {
	Name, Behavior, Substrate string
}

// Woven is one overlay woven into a skill: how (overlay or block-replacement of Block) and at
// what priority.
type Woven struct {
	Slug, File, Kind, Block string
	Priority                int
}

// Skipped is a matching overlay that was not woven, and why. Audit says it as the line appended
// to the package's _log.md or the session's log.
type Skipped struct {
	Slug, File string
	// Reason is "shadow", "archived", "expired", "superseded", "locked", "cap" or
	// "no-block".
	Reason string
	Detail string
}

// Audit renders a skipped overlay as one audit line for the session's log or _log.md.
func (s Skipped) Audit(now time.Time, actor string) string {
	return fmt.Sprintf("%s skip %s (%s) for actor %s: %s: %s", now.UTC().Format(time.RFC3339), s.Slug, s.File, actor, s.Reason, s.Detail)
}

// Weaving is what weaving overlays into a skill did: the woven skill, the overlays woven in
// order, those skipped, and warnings (the cap).
type Weaving struct {
	Skill    string
	Woven    []Woven
	Skipped  []Skipped
	Warnings []string
}
