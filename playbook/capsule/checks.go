package capsule

import (
	"fmt"
	"strings"
)

// How a check is carried out.
const (
	AsError      = "error"
	AsWarning    = "warning"
	NotChecked   = "not checked"
	LibraryError = "error (library)"
)

// ValidationCheck is one of the seed's validation checks and how this package carries it out.
type ValidationCheck struct {
	Number int
	// Tag is the seed's bracket: [enforced], [honor-system], ….
	Tag string
	// Wording is the seed's text of the check.
	Wording string
	// As is AsError, AsWarning or NotChecked; How says how (the approximation, or why not).
	As  string
	How string
}

// Checks are the seed's 21 validation checks in order.
var Checks = []ValidationCheck{
	{1, "enforced", "Filename ends in .playbook.md", AsError, "the file name (a pipeline may end in .pipeline.md)"},
	{2, "honor-system during v1.3 grace; enforced for new playbooks post-2026-04-21", "type: playbook present", AsError, "an error for a playbook created on or after 2026-04-21 (or with no created: date), a warning for an older one"},
	{3, "enforced", "All required frontmatter fields present", AsError, "title (≤ 100 characters), version, status, owner or author, readers, scope, tags (at least one, lowercase-hyphen)"},
	{4, "enforced", "status: is one of draft, active, superseded, archived (or legacy published during grace)", AsError, "published draws a warning and is read as active"},
	{5, "enforced", "readers: is non-empty array of recognized values", AsError, "agent, human, system"},
	{6, "enforced", "scope: is one of single-session, multi-session, standing", AsError, ""},
	{7, "enforced", "Body contains all 5 REQUIRED sections", AsError, "## Intent, ## Rules, executable content (## Groups, ## Steps, ## Execution Steps or at least two ## Step N: headings), ## Outcomes, ## Verification; a pipeline has pipeline.capsule's sections instead"},
	{8, "enforced", "Body declares executable content via exactly one shape — not multiple", AsError, ""},
	{9, "enforced", "§Outcomes contains at least one [REQUIRED] outcome", AsError, ""},
	{10, "enforced", "§Verification declares one of the 6 methods", AsError, "a `method: X` line, or exactly one method named in the section"},
	{11, "enforced", "New playbook files start at status: draft; direct active rejected", AsError, "approximated: one version cannot show its history, so a playbook created on or after 2026-04-21 at active or later must carry the lock provenance (locked_by and locked_at) that its promotion from draft records"},
	{12, "enforced", "supersedes: / superseded_by: (if present) form bidirectional pairs + both resolve to valid entries", LibraryError, "resolved by uid, path or file name among the playbooks validated together"},
	{13, "enforced", "If status: superseded, superseded_by: is set + resolves", AsError, "set: on the file; resolves: across the library"},
	{14, "enforced", "If status: active or later, version: is concrete semver/decimal — not placeholder", AsError, "a suffix naming a placeholder (draft, wip, tbd, todo, placeholder, snapshot, unreleased, xx) is not concrete: v1.0-draft is refused, 2.0.0-rc.1 is accepted"},
	{15, "honor-system", "Cold-boot-verifiable: stranger reading playbook + declared Resources can execute to declared Outcomes", NotChecked, "needs a reader; no rule decides it"},
	{16, "honor-system", "§Rules items are unambiguous + testable", AsWarning, "approximated: a §Rules item without MUST, MUST NOT, SHOULD or SHOULD NOT (the seed's phrasing directive)"},
	{17, "honor-system", "No vault-specific UIDs/paths/names in executable content", AsWarning, "approximated: an 8-hex UID or a vault/, .tropo/ or .tropo-studio/ path in the executable section"},
	{18, "honor-system", "Pipeline subtype (if applicable): also satisfies pipeline.capsule's validation checks", NotChecked, "pipeline.capsule's checks are not part of the seed"},
	{19, "honor-system at v1.4; enforced at v1.5", "Concierge-paths subtype (if applicable): body contains ## Post-Outcome Handoff section, non-empty", AsError, "enforced: the capsule is at v2.6"},
	{20, "honor-system at v1.4.2; enforced at v1.5+", "Test-harness subtype (if applicable): frontmatter contains target_artifact_type: + verdict_format: (and mode: if Strict/Skeptic variants); body contains ## Report Format section, non-empty", AsError, "enforced: the capsule is at v2.6; ## Report Format must come after ## Verification"},
	{21, "stub-warn at v1.4.2; hard-fail at v1.5+", "composes_into: ↔ calls: bidirectional consistency", LibraryError, "hard-fail: the capsule is at v2.6"},
}

// wording is the seed's text of check n, for messages.
func wording(n int) string { return Checks[n-1].Wording }

// ChecksMarkdown renders Checks as the markdown table docs/playbooks.md carries.
func ChecksMarkdown() string {
	var b strings.Builder
	b.WriteString("| # | seed tag | check (the seed's wording) | reported as | how |\n|---|---|---|---|---|\n")
	for _, c := range Checks {
		how := c.How
		if how == "" {
			how = "as written"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", c.Number, c.Tag, strings.ReplaceAll(c.Wording, "|", `\|`), c.As, how)
	}
	return b.String()
}
