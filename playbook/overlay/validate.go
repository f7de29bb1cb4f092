package overlay

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

var (
	slugPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
	duration    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^P(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$`)
	})
	timestamp = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$`)
	})
)

// Validate checks one overlay against the playbooks/v1 frontmatter schema.
func Validate(o *Overlay) ir.Diagnostics {
	r := &source.Reporter{File: o.File}
	validateRequired(r, o)
	validateIdentity(r, o)
	validateKind(r, o)
	validateLifetime(r, o)
	validateEvidence(r, o)
	validateStatus(r, o)
	return r.Diags
}

// validateRequired reports each required frontmatter key that is missing.
func validateRequired(r *source.Reporter, o *Overlay) {
	at := ir.Pos{Line: 1, Col: 1}
	required := func(set bool, key, hint string) {
		if !set {
			r.Errorf(at, hint, "the frontmatter has no %s", key)
		}
	}
	required(o.Schema.Pos.IsSet(), "schema", "schema: "+Schema)
	required(o.Slug.Pos.IsSet(), "slug", "e.g. slug: flag-contradictions-explicitly")
	required(o.Title.Pos.IsSet(), "title", "one sentence saying what the overlay does")
	required(o.TargetsPos.IsSet(), "targets", "e.g. targets: [{kind: role, ref: role/librarian}]")
	required(o.Kind.Pos.IsSet(), "kind", "kind: overlay or kind: block-replacement")
	required(o.Status.Pos.IsSet(), "status", "new overlays enter at status: shadow")
}

// validateIdentity checks the schema, the slug and the targets.
func validateIdentity(r *source.Reporter, o *Overlay) {
	if s := o.Schema.Value; s != "" && s != Schema {
		r.Errorf(o.Schema.Pos, "schema: "+Schema, "unknown schema %q", s)
	}
	if s := o.Slug.Value; s != "" && !slugPattern().MatchString(s) {
		r.Errorf(o.Slug.Pos, "kebab-case, e.g. "+kebab(s), "slug %q is not kebab-case", s)
	}
	if o.TargetsPos.IsSet() && len(o.Targets) == 0 {
		r.Errorf(o.TargetsPos, "e.g. targets: [{kind: role, ref: role/librarian}]", "targets is empty: the overlay would apply to no one")
	}
	for i, t := range o.Targets {
		validateTarget(r, i, t)
	}
}

// validateKind checks the kind, the block it may name and the priority.
func validateKind(r *source.Reporter, o *Overlay) {
	switch k := o.Kind.Value; {
	case k == "":
	case !contains(Kinds, k):
		r.Errorf(o.Kind.Pos, ir.Suggest(k, Kinds), "unknown kind %q", k)
	case k == "block-replacement" && !o.Block.Pos.IsSet():
		r.Errorf(o.Kind.Pos, "name the block of the skill it swaps, e.g. block: tone", "a block-replacement names no block")
	case k == "overlay" && o.Block.Pos.IsSet():
		r.Errorf(o.Block.Pos, "remove block, or write kind: block-replacement", "block is for kind: block-replacement; an overlay is appended")
	}
	if b := o.Block.Value; b != "" && !slugPattern().MatchString(b) {
		r.Errorf(o.Block.Pos, "kebab-case, e.g. "+kebab(b), "block name %q is not kebab-case", b)
	}
	if p := o.Priority; p.Pos.IsSet() && (p.Value < 0 || p.Value > 100) {
		r.Errorf(p.Pos, "from 0 to 100; higher wins ties; the default is 50", "priority %d is out of range", p.Value)
	}
}

// validateLifetime checks lock_check, ttl and updated_at.
func validateLifetime(r *source.Reporter, o *Overlay) {
	for _, l := range o.LockCheck {
		if !slugPattern().MatchString(l.Value) {
			r.Errorf(l.Pos, "a trait id, e.g. warmth or voice-register", "lock_check trait %q is not a trait id", l.Value)
		}
	}
	if t := o.TTL; t.Value != "" {
		if !validDuration(t.Value) {
			r.Errorf(t.Pos, "an ISO 8601 duration, e.g. P30D, P2W or PT12H", "ttl %q is not an ISO 8601 duration", t.Value)
		} else if !o.UpdatedAt.Pos.IsSet() {
			r.Errorf(t.Pos, "add updated_at: the ttl counts from it, never from the file's mtime", "ttl without updated_at")
		}
	}
	if u := o.UpdatedAt; u.Value != "" && !timestamp().MatchString(u.Value) {
		r.Errorf(u.Pos, "e.g. updated_at: 2026-06-01 or 2026-06-01T12:00:00Z", "updated_at %q is not an ISO 8601 date or time", u.Value)
	}
}

// validateEvidence checks that each piece of evidence has a known kind and a ref.
func validateEvidence(r *source.Reporter, o *Overlay) {
	for i, e := range o.Evidence {
		what := fmt.Sprintf("evidence %d", i+1)
		if !e.Kind.Pos.IsSet() {
			r.Errorf(e.Pos, "valid kinds: "+strings.Join(EvidenceKinds, ", "), "%s has no kind", what)
		} else if e.Kind.Value != "" && !contains(EvidenceKinds, e.Kind.Value) {
			r.Errorf(e.Kind.Pos, ir.Suggest(e.Kind.Value, EvidenceKinds), "%s: unknown kind %q", what, e.Kind.Value)
		}
		if !e.Ref.Pos.IsSet() {
			r.Errorf(e.Pos, "name the run, conversation, work item or reflection", "%s has no ref", what)
		}
	}
}

// validateStatus checks the status, supersedes and that there is a prompt fragment.
func validateStatus(r *source.Reporter, o *Overlay) {
	if s := o.Status.Value; s != "" && !contains(Statuses, s) {
		r.Errorf(o.Status.Pos, ir.Suggest(s, Statuses), "unknown status %q", s)
	}
	for _, s := range o.Supersedes {
		if s.Value == o.Slug.Value {
			r.Errorf(s.Pos, "remove it", "the overlay supersedes itself")
		}
	}
	if o.Body == "" || isOnlyHeading(o.Body) {
		r.Errorf(o.BodyPos, "write the prompt fragment after the frontmatter, under # "+o.Title.Value, "the overlay has no prompt fragment")
	}
}

func validateTarget(r *source.Reporter, i int, t Target) {
	what := fmt.Sprintf("target %d", i+1)
	switch {
	case !t.Kind.Pos.IsSet():
		r.Errorf(t.Pos, "valid kinds: "+strings.Join(TargetKinds, ", "), "%s has no kind", what)
	case t.Kind.Value != "" && !contains(TargetKinds, t.Kind.Value):
		r.Errorf(t.Kind.Pos, ir.Suggest(t.Kind.Value, TargetKinds), "%s: unknown kind %q", what, t.Kind.Value)
	}
	ref := t.Ref.Value
	switch {
	case !t.Ref.Pos.IsSet():
		r.Errorf(t.Pos, "e.g. ref: role/librarian, operator/*", "%s has no ref", what)
	case ref == "":
	case strings.Contains(ref, "/") && contains(TargetKinds, t.Kind.Value) && !strings.HasPrefix(ref, t.Kind.Value+"/"):
		r.Errorf(t.Ref.Pos, "write ref: "+t.Kind.Value+"/"+ref[strings.LastIndex(ref, "/")+1:]+", or change the kind", "%s: ref %q is not a %s ref", what, ref, t.Kind.Value)
	default:
		if _, err := path.Match(ref, ""); err != nil {
			r.Errorf(t.Ref.Pos, "globs use *, ? and [...] as in file names", "%s: ref %q is not a valid glob", what, ref)
		}
	}
}

// validDuration reports whether s is an ISO 8601 duration with at least one component.
func validDuration(s string) bool {
	m := duration().FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return false
	}
	return true
}

func isOnlyHeading(body string) bool {
	level, _ := source.Heading(body)
	return level > 0 && !strings.Contains(body, "\n")
}

func kebab(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
