// Package capsule reads capsule playbooks (seed 000): *.playbook.md files holding YAML
// frontmatter (type: playbook, title, version, status, owner or author, readers, scope, tags, …)
// and a body with five required sections (Intent, Rules, executable content, Outcomes,
// Verification), living through draft → active → superseded → archived.
//
// Validate runs the seed's 21 validation checks on one playbook, and ValidateLibrary the rules
// that span a library of them (one active playbook per trigger and scope, bidirectional
// supersession and composition, unique UIDs). Every diagnostic names its check by number and
// the seed's wording. [enforced] checks are errors; [honor-system] checks are warnings where a
// rule approximates them, and Checks lists the ones no rule can decide.
package capsule

import "github.com/autonomyhq/autonomy/ir"

// Playbook is a parsed capsule playbook.
type Playbook struct {
	// File is the path as given.
	File string
	// HasFrontmatter is false when the file has none.
	HasFrontmatter bool
	FrontmatterPos ir.Pos

	UID     ir.String
	Type    ir.String
	Title   ir.String
	Version ir.String
	Status  ir.String
	// Owner is owner: or author: (whichever is written; Owner.Pos is zero when neither is).
	Owner      ir.String
	Readers    []ir.String
	ReadersPos ir.Pos
	Scope      ir.String
	Tags       []ir.String
	TagsPos    ir.Pos
	Trigger    ir.String
	Created    ir.String
	// ChangelogPos is where the frontmatter's changelog: is (zero when absent); Changelog counts
	// its entries.
	ChangelogPos ir.Pos
	Changelog    int
	LockedBy     ir.String
	LockedAt     ir.String

	Supersedes   ir.String
	SupersededBy ir.String
	Calls        []ir.String
	ComposesInto []Composition

	ConciergePath      bool
	TargetArtifactType ir.String
	VerdictFormat      ir.String
	Mode               ir.String
	// PipelineFields says which of the pipeline subtype's frontmatter fields are declared.
	PipelineFields map[string]bool

	// Sections are the body's ## sections in order.
	Sections []*Section
	// Verification is the method §Verification declares (set by Validate when it names one).
	Verification ir.String
	// BodyStart is the first line of the body.
	BodyStart int

	// unread is set when the frontmatter could not be read (reported): its fields are unknown,
	// and without a closing --- so is the body.
	unread, unclosed bool
}

// Composition is one composes_into entry: the orchestrator this playbook composes into.
type Composition struct {
	Pos      ir.Pos
	Playbook ir.String
	Role     ir.String
}

// Section is one ## section of the body.
type Section struct {
	Title ir.String
	// Lines are the section's lines after its heading (up to the next ## heading).
	Lines []Line
}

// Line is one body line and its position.
type Line struct {
	Pos  ir.Pos
	Text string
}

// Statuses are the canonical life-cycle states; Published is the legacy alias of active.
var Statuses = []string{"draft", "active", "superseded", "archived"}

// Published is the legacy status accepted during the v1.3 grace, read as active.
const Published = "published"

// Readers, scopes and verification methods of the seed.
var (
	ReaderValues = []string{"agent", "human", "system"}
	Scopes       = []string{"single-session", "multi-session", "standing"}
	Methods      = []string{"self-attestation", "peer-review", "human-sign-off", "automated-check", "cold-boot-test", "external-audit"}
)

// Test-harness subtype enums.
var (
	TargetArtifactTypes = []string{"release", "build", "capsule-definition", "playbook", "ledger-entry", "vault", "kernel-artifact"}
	VerdictFormats      = []string{
		"PASS / PASS-WITH-FINDINGS / FAIL",
		"PASS / PASS-WITH-GAPS / FAIL",
		"PASS-CLEAN / PASS-WITH-NEW-FINDINGS / REGRESSION-FAILURE",
		"RATIFY-CLEAN / RATIFY-WITH-REVISIONS / REJECT-REWORK-REQUIRED",
		"STRUCTURAL-CONFORMS / STRUCTURAL-CONFORMS-WITH-FINDINGS / STRUCTURAL-VIOLATIONS-PRESENT",
	}
	Modes = []string{"strict", "skeptic"}
)

// PipelineSections are the body sections of the pipeline subtype, which replace the five
// required sections.
var PipelineSections = []string{"What This Pipeline Governs", "Stages", "Positions", "Forward-Only Motion Rule", "Stage Transition Rules", "Cold-Boot Walk-Through", "Known Enforcement Gaps"}

// Section returns the first section titled name (case-insensitive), or nil.
func (p *Playbook) Section(name string) *Section {
	for _, s := range p.Sections {
		if equalFold(s.Title.Value, name) {
			return s
		}
	}
	return nil
}

// HasTag reports whether the playbook is tagged tag.
func (p *Playbook) HasTag(tag string) bool {
	for _, t := range p.Tags {
		if t.Value == tag {
			return true
		}
	}
	return false
}

// IsPipeline reports whether the playbook is of the pipeline subtype: tagged pipeline, with
// stages, positions, artifact_types and forward_only declared.
func (p *Playbook) IsPipeline() bool {
	f := p.PipelineFields
	return p.HasTag("pipeline") && f["stages"] && f["positions"] && f["artifact_types"] && f["forward_only"]
}

// IsConcierge reports whether the playbook is of the concierge-paths subtype.
func (p *Playbook) IsConcierge() bool { return p.HasTag("concierge-paths") || p.ConciergePath }

// IsTestHarness reports whether the playbook is of the test-harness subtype.
func (p *Playbook) IsTestHarness() bool { return p.HasTag("test-harness") }
