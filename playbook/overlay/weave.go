package overlay

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
)

// A skill marks a block a block-replacement may swap with HTML comments, invisible in rendered
// markdown:
//
//	<!-- block: tone -->
//	Answer warmly, in the user's register.
//	<!-- /block: tone -->
//
// The block is everything between the two markers (the markers stay).
var (
	blockOpen  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<!--\s*block:\s*([a-z0-9]+(?:-[a-z0-9]+)*)\s*-->`) })
	blockClose = func(name string) *regexp.Regexp {
		return regexp.MustCompile(`<!--\s*/block:\s*` + regexp.QuoteMeta(name) + `\s*-->`)
	}
)

// FindBlock returns the text of the named block of skill.
func FindBlock(skill, name string) (string, bool) {
	start, end, ok := blockSpan(skill, name)
	if !ok {
		return "", false
	}
	return skill[start:end], true
}

// blockSpan locates the text of the named block: after its opening marker, before its closing one.
func blockSpan(skill, name string) (start, end int, ok bool) {
	for _, m := range blockOpen().FindAllStringSubmatchIndex(skill, -1) {
		if skill[m[2]:m[3]] != name {
			continue
		}
		loc := blockClose(name).FindStringIndex(skill[m[1]:])
		if loc == nil {
			return 0, 0, false
		}
		return m[1], m[1] + loc[0], true
	}
	return 0, 0, false
}

// Actor is who a session is for: the actor's name (role/NAME and operator/NAME targets), its
// behavior (skill/NAME: the behavior's declared name, ir.BehaviorName: its frontmatter's name:,
// else the skill folder's name or the behavior file's name without extension) and the substrate
// it runs on (runtime/NAME). It is playproto.Actor, what a runner hosting the weave passes.
type Actor = playproto.Actor

// candidates are the kind/ref strings a target pattern is matched against.
func candidates(a Actor) []string {
	return []string{"role/" + a.Name, "operator/" + a.Name, "skill/" + a.Behavior, "runtime/" + a.Substrate}
}

// Matches reports whether any target of o matches the actor (globs as in path.Match).
func (o *Overlay) Matches(a Actor) bool {
	for _, t := range o.Targets {
		pattern := t.Pattern()
		for _, c := range candidates(a) {
			if !strings.HasPrefix(c, t.Kind.Value+"/") {
				continue
			}
			if ok, err := path.Match(pattern, c); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// Updated is the overlay's updated_at as a time (zero when absent or unreadable).
func (o *Overlay) Updated() time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, o.UpdatedAt.Value); err == nil {
			return t
		}
	}
	return time.Time{}
}

// Expiry is when the overlay's ttl runs out, counted from its own updated_at (never from a file's
// mtime); ok is false when it has no ttl, or no updated_at to count from.
func (o *Overlay) Expiry() (time.Time, bool) {
	d, ok := parseDuration(o.TTL.Value)
	u := o.Updated()
	if !ok || u.IsZero() {
		return time.Time{}, false
	}
	return u.AddDate(d.years, d.months, d.days).Add(d.clock), true
}

type isoDuration struct {
	years, months, days int
	clock               time.Duration
}

// parseDuration reads an ISO 8601 duration (PnYnMnWnDTnHnMnS).
func parseDuration(s string) (isoDuration, bool) {
	m := duration().FindStringSubmatch(s)
	if m == nil || !validDuration(s) {
		return isoDuration{}, false
	}
	n := func(i int) int {
		v, _ := strconv.Atoi(strings.TrimRight(m[i], "YMWDHS"))
		return v
	}
	d := isoDuration{years: n(1), months: n(2), days: 7*n(3) + n(4)}
	d.clock = time.Duration(n(6))*time.Hour + time.Duration(n(7))*time.Minute
	if m[8] != "" {
		sec, _ := strconv.ParseFloat(strings.TrimSuffix(m[8], "S"), 64)
		d.clock += time.Duration(sec * float64(time.Second))
	}
	return d, true
}

// Session is what weaving needs to know of the session being started.
type Session struct {
	Actor Actor
	// Skill is the actor's skill text the overlays are woven into.
	Skill string
	// Locked are the persona's locked traits (the profile's policy.box.persona.locked).
	Locked []Trait
	// Cap is the most active overlays woven for one actor (0: no cap).
	Cap int
	// Now is the session's start, against which ttls are counted.
	Now time.Time
}

// Woven is one overlay woven into the skill, in order (playproto.Woven).
type Woven = playproto.Woven

// Skipped is a matching overlay that was not woven, and why (playproto.Skipped). Its Audit says
// it as the line appended to the package's _log.md or the session's log.
type Skipped = playproto.Skipped

// Result is what Weave did: the woven skill, the overlays woven in order, those skipped, and
// warnings (the cap). It is playproto.Weaving, what a runner hosting the weave reads.
type Result = playproto.Weaving

// skip is o skipped for reason (see Skipped), detail saying why.
func skip(o *Overlay, reason, detail string) Skipped {
	return Skipped{Slug: o.Slug.Value, File: o.File, Reason: reason, Detail: detail}
}

// Weave applies AIP-12's apply contract for one session: the overlays whose targets match the
// actor, active ones only (shadow ones are computed and reported, never woven; archived and
// expired ones are skipped, and so is one a live active overlay of the package supersedes), sorted by priority (highest first), then by updated_at (latest
// first), then by slug; each checked against the locked traits (any violation skips it, whatever
// its lock_check says); an overlay is appended to the skill, a block-replacement swaps its named
// block; at most Cap are woven (the rest are skipped with a warning). The same inputs give the
// same result.
func Weave(overlays []*Overlay, s Session) Result {
	res := Result{Skill: s.Skill}
	var active []*Overlay
	superseded := supersededBy(overlays, s.Now)
	for _, o := range overlays {
		if !o.Matches(s.Actor) {
			continue
		}
		switch o.Status.Value {
		case "active":
			if exp, ok := o.Expiry(); ok && !s.Now.Before(exp) {
				res.Skipped = append(res.Skipped, skip(o, "expired", fmt.Sprintf("its ttl %s from updated_at %s ran out at %s", o.TTL.Value, o.UpdatedAt.Value, exp.UTC().Format(time.RFC3339))))
				continue
			}
			if by, ok := superseded[o.Slug.Value]; ok {
				res.Skipped = append(res.Skipped, skip(o, "superseded", fmt.Sprintf("the active overlay %s (%s) supersedes it; archive it (status: archived)", by.Slug.Value, by.File)))
				continue
			}
			active = append(active, o)
		case "shadow":
			res.Skipped = append(res.Skipped, skip(o, "shadow", "computed, never woven until promoted to active"))
		default:
			res.Skipped = append(res.Skipped, skip(o, "archived", "archived overlays are never applied"))
		}
	}
	sort.SliceStable(active, func(i, j int) bool {
		a, b := active[i], active[j]
		if a.Priority.Value != b.Priority.Value {
			return a.Priority.Value > b.Priority.Value
		}
		if ua, ub := a.Updated(), b.Updated(); !ua.Equal(ub) {
			return ua.After(ub)
		}
		if a.Slug.Value != b.Slug.Value {
			return a.Slug.Value < b.Slug.Value
		}
		return a.File < b.File
	})
	for _, o := range active {
		if v := CheckLock(o, res.Skill, s.Locked); len(v) > 0 {
			details := make([]string, len(v))
			for i, x := range v {
				details[i] = x.String()
			}
			res.Skipped = append(res.Skipped, skip(o, "locked", strings.Join(details, "; ")))
			continue
		}
		if s.Cap > 0 && len(res.Woven) >= s.Cap {
			res.Skipped = append(res.Skipped, skip(o, "cap", fmt.Sprintf("the cap of %d active overlays per actor is reached", s.Cap)))
			continue
		}
		if o.Kind.Value == "block-replacement" {
			start, end, ok := blockSpan(res.Skill, o.Block.Value)
			if !ok {
				res.Skipped = append(res.Skipped, skip(o, "no-block", fmt.Sprintf("the skill has no block %q (<!-- block: %s --> … <!-- /block: %s -->)", o.Block.Value, o.Block.Value, o.Block.Value)))
				continue
			}
			res.Skill = res.Skill[:start] + "\n" + fragment(o.Body) + "\n" + res.Skill[end:]
		} else {
			res.Skill = strings.TrimRight(res.Skill, "\n") + "\n\n" + fragment(o.Body) + "\n"
		}
		res.Woven = append(res.Woven, Woven{Slug: o.Slug.Value, File: o.File, Kind: o.Kind.Value, Block: o.Block.Value, Priority: o.Priority.Value})
	}
	if n := len(res.Woven) + count(res.Skipped, "cap"); s.Cap > 0 && n > s.Cap {
		res.Warnings = append(res.Warnings, fmt.Sprintf("actor %s: %d active overlays match, over the cap of %d: %d left out (identity drift: review and archive some)", s.Actor.Name, n, s.Cap, n-s.Cap))
	}
	return res
}

// supersededBy maps each slug a live (active, unexpired) overlay supersedes to that overlay: AIP-12
// archives a superseded overlay, so it is never applied once its successor is live, whatever its
// own status still says. A shadow successor supersedes nothing until it is promoted.
func supersededBy(overlays []*Overlay, now time.Time) map[string]*Overlay {
	m := map[string]*Overlay{}
	for _, o := range overlays {
		if o.Status.Value != "active" {
			continue
		}
		if exp, ok := o.Expiry(); ok && !now.Before(exp) {
			continue
		}
		for _, s := range o.Supersedes {
			if _, seen := m[s.Value]; !seen && s.Value != o.Slug.Value {
				m[s.Value] = o
			}
		}
	}
	return m
}

func count(skipped []Skipped, reason string) int {
	n := 0
	for _, s := range skipped {
		if s.Reason == reason {
			n++
		}
	}
	return n
}

// fragment is an overlay's body as woven: its leading # title (the overlay's own heading) is
// kept, trailing blank lines are not.
func fragment(body string) string { return strings.TrimSpace(body) }
