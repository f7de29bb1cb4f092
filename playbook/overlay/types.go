// Package overlay reads AIP-12 PLAYBOOK.md overlays (seed 001, schema: playbooks/v1): prompt
// fragments with YAML frontmatter saying which actors they target, how they are woven (appended,
// or replacing a named block), their priority, the locked persona traits they must not touch,
// their life cycle (shadow → active → archived) and an optional ttl. A package is a directory of
// them, optionally nested by target, with an _index.md listing every one.
//
// Parse and Validate check one overlay; ValidatePackage checks a package (unique slugs,
// supersedes that resolve, an _index.md that matches Index byte for byte).
package overlay

import "github.com/autonomyhq/autonomy/ir"

// Schema is the schema identifier of an overlay.
const Schema = "playbooks/v1"

// IndexFile and LogFile are the package files that are not overlays.
const (
	IndexFile = "_index.md"
	LogFile   = "_log.md"
)

// The enums of the frontmatter.
var (
	TargetKinds   = []string{"operator", "role", "skill", "runtime"}
	Kinds         = []string{"overlay", "block-replacement"}
	Statuses      = []string{"shadow", "active", "archived"}
	EvidenceKinds = []string{"run", "conversation", "work-item", "reflection"}
)

// DefaultPriority is the priority of an overlay that declares none.
const DefaultPriority = 50

// Overlay is one parsed PLAYBOOK.md overlay.
type Overlay struct {
	File       string
	Schema     ir.String
	Slug       ir.String
	Title      ir.String
	TargetsPos ir.Pos
	Targets    []Target
	// Kind is overlay or block-replacement; Block names the block a block-replacement swaps.
	Kind  ir.String
	Block ir.String
	// Priority is 0..100 (DefaultPriority when absent: Priority.Pos is then zero).
	Priority  ir.Int
	LockCheck []ir.String
	// TTL is an ISO 8601 duration counted from UpdatedAt.
	TTL       ir.String
	UpdatedAt ir.String
	Evidence  []Evidence
	Status    ir.String
	// Supersedes are the slugs this overlay replaces.
	Supersedes []ir.String
	// Body is the prompt fragment (the markdown after the frontmatter, trimmed), BodyPos where it
	// starts.
	Body    string
	BodyPos ir.Pos
}

// Target is one targets entry: kind operator, role, skill or runtime, and a ref (a slug or a
// glob, written with or without its kind, e.g. role/librarian or librarian).
type Target struct {
	Pos  ir.Pos
	Kind ir.String
	Ref  ir.String
}

// Evidence is one provenance entry.
type Evidence struct {
	Pos  ir.Pos
	Kind ir.String
	Ref  ir.String
	Note ir.String
}

// Pattern is the target as a kind/ref pattern, e.g. role/librarian or operator/*.
func (t Target) Pattern() string {
	if t.Kind.Value != "" && len(t.Ref.Value) > len(t.Kind.Value) && t.Ref.Value[:len(t.Kind.Value)+1] == t.Kind.Value+"/" {
		return t.Ref.Value
	}
	return t.Kind.Value + "/" + t.Ref.Value
}
