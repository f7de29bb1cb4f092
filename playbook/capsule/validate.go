package capsule

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

// LockDate is the v2.0 lock: playbooks created before it have the legacy grace.
const LockDate = "2026-04-21"

var (
	datePrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`) })
	tagPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
	concrete   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.-]+)?$`) })
	stepN      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^step\s+\d+\s*:`) })
	required   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REQUIRED\]`) })
	methodLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[\s*_>-]*method[\s*_]*:[\s*_` + "`" + `]*([a-z-]+)`)
	})
	methodWord = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(self-attestation|peer-review|human-sign-off|automated-check|cold-boot-test|external-audit)\b`)
	})
	modal       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(MUST|SHOULD)\b`) })
	listItem    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([-*+]|\d+[.)])\s+`) })
	vaultUID    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[0-9a-f]{8}\b`) })
	vaultPath   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s(\x60"'])(\.tropo-studio/|\.tropo/|vault/)`) })
	hasDigit    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]`) })
	hasHexAlpha = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-f]`) })
)

// Check parses one file and runs the single-file checks on it: every diagnostic, sorted. The
// library-wide rules need the other playbooks: see ValidateLibrary.
func Check(file string, data []byte) (*Playbook, ir.Diagnostics) {
	p, diags := Parse(file, data)
	if p != nil {
		diags = append(diags, Validate(p)...)
	}
	return p, diags.Sort()
}

type checker struct {
	r *source.Reporter
	p *Playbook
}

// fail reports a failed check as an error naming its number and the seed's wording.
func (c checker) fail(n int, at ir.Pos, hint, format string, args ...any) {
	c.report(ir.Error, n, at, hint, format, args...)
}

// warn reports an honor-system check an approximation flags.
func (c checker) warn(n int, at ir.Pos, hint, format string, args ...any) {
	c.report(ir.Warning, n, at, hint, format, args...)
}

func (c checker) report(sev ir.Severity, n int, at ir.Pos, hint, format string, args ...any) {
	c.r.Report(sev, at, hint, "check %d (%s): %s", n, wording(n), fmt.Sprintf(format, args...))
}

// legacy reports whether the playbook predates the v2.0 lock, by its created: date.
func (p *Playbook) legacy() bool {
	d := datePrefix().FindString(p.Created.Value)
	return d != "" && d < LockDate
}

// status is the playbook's status with the legacy alias read as active.
func (p *Playbook) status() string {
	if p.Status.Value == Published {
		return "active"
	}
	return p.Status.Value
}

// Validate runs the checks that need only the playbook itself (all but 12's resolution, 13's
// resolution and 21, which ValidateLibrary runs).
func Validate(p *Playbook) ir.Diagnostics {
	c := checker{r: &source.Reporter{File: p.File}, p: p}
	top := ir.Pos{Line: 1, Col: 1}
	if !strings.HasSuffix(p.File, ".playbook.md") && !(p.IsPipeline() && strings.HasSuffix(p.File, ".pipeline.md")) {
		c.fail(1, top, "rename it NAME.playbook.md", "the file name does not end in .playbook.md")
	}
	switch {
	case !p.HasFrontmatter:
		c.fail(3, top, example, "the playbook has no frontmatter")
	case !p.unread:
		c.frontmatter()
	}
	if !p.unclosed {
		c.body()
	}
	return c.r.Diags
}

func (c checker) frontmatter() {
	c.typeField()
	c.requiredFields()
	c.titleAndTags()
	c.statusReadersScope()
	c.lifecycle()
	c.schemaRules()
	if c.p.IsTestHarness() {
		c.harnessFields()
	}
}

// typeField checks type: playbook, with a grace for legacy playbooks.
func (c checker) typeField() {
	p := c.p
	at := p.FrontmatterPos
	switch {
	case !p.Type.Pos.IsSet() && p.legacy():
		c.warn(2, at, "add type: playbook at the next amendment", "type: is missing (legacy grace: created %s, before the v2.0 lock of %s)", p.Created.Value, LockDate)
	case !p.Type.Pos.IsSet():
		c.fail(2, at, "add type: playbook", "type: is missing")
	case p.Type.Value != "" && p.Type.Value != "playbook":
		c.fail(2, p.Type.Pos, "write type: playbook", "type is %q, not playbook", p.Type.Value)
	}
}

// requiredFields reports each required frontmatter field that is missing.
func (c checker) requiredFields() {
	p := c.p
	at := p.FrontmatterPos
	missing := func(field, hint string, set bool) {
		if !set {
			c.fail(3, at, hint, "the required field %s is missing", field)
		}
	}
	missing("title:", "e.g. title: \"Release a version\"", p.Title.Pos.IsSet())
	missing("version:", "e.g. version: \"1.0\"", p.Version.Pos.IsSet())
	missing("status:", "new playbooks start at status: draft", p.Status.Pos.IsSet())
	missing("owner: (or author:)", "e.g. owner: release-team", p.Owner.Pos.IsSet())
	missing("readers:", "e.g. readers: [agent]", p.ReadersPos.IsSet())
	missing("scope:", "valid: "+strings.Join(Scopes, ", "), p.Scope.Pos.IsSet())
	missing("tags:", "e.g. tags: [release]", p.TagsPos.IsSet())
}

// titleAndTags checks the title's length and that the tags are lowercase-hyphen.
func (c checker) titleAndTags() {
	p := c.p
	if n := len([]rune(p.Title.Value)); n > 100 {
		c.fail(3, p.Title.Pos, "shorten it to a verb-led or noun phrase", "title: is %d characters; the limit is 100", n)
	}
	if p.TagsPos.IsSet() && len(p.Tags) == 0 {
		c.fail(3, p.TagsPos, "e.g. tags: [release]", "tags: is empty; give at least one tag")
	}
	for _, t := range p.Tags {
		if !tagPattern().MatchString(t.Value) {
			c.fail(3, t.Pos, "e.g. "+strings.ToLower(strings.Join(strings.Fields(t.Value), "-")), "tag %q is not lowercase-hyphen", t.Value)
		}
	}
}

// statusReadersScope checks the status, readers and scope against their allowed values.
func (c checker) statusReadersScope() {
	p := c.p
	switch s := p.Status.Value; {
	case s == "" || contains(Statuses, s):
	case s == Published && p.legacy():
		c.warn(4, p.Status.Pos, "write status: active at the next amendment", "status: published is the legacy alias of active")
	case s == Published:
		c.fail(4, p.Status.Pos, "write status: active (published is a legacy alias, not for playbooks created after "+LockDate+")", "status %q is not one of %s", s, strings.Join(Statuses, ", "))
	default:
		c.fail(4, p.Status.Pos, ir.Suggest(s, Statuses), "status %q is not one of %s", s, strings.Join(Statuses, ", "))
	}
	if p.ReadersPos.IsSet() && len(p.Readers) == 0 {
		c.fail(5, p.ReadersPos, "e.g. readers: [agent, human]", "readers: is empty")
	}
	for _, rd := range p.Readers {
		if !contains(ReaderValues, rd.Value) {
			c.fail(5, rd.Pos, ir.Suggest(rd.Value, ReaderValues), "reader %q is not a recognized value", rd.Value)
		}
	}
	if s := p.Scope.Value; s != "" && !contains(Scopes, s) {
		c.fail(6, p.Scope.Pos, ir.Suggest(s, Scopes), "scope %q is not one of %s", s, strings.Join(Scopes, ", "))
	}
}

// lifecycle checks what a playbook past draft must carry: lock provenance, a successor when
// superseded, and a concrete version.
func (c checker) lifecycle() {
	p := c.p
	live := p.status() == "active" || p.status() == "superseded" || p.status() == "archived"
	if live && !p.legacy() && (!p.LockedBy.Pos.IsSet() || !p.LockedAt.Pos.IsSet()) {
		c.fail(11, p.Status.Pos, "author it at status: draft; its promotion records locked_by: and locked_at:",
			"status is %s but the playbook carries no lock provenance (locked_by:, locked_at:), so it did not come from draft", p.Status.Value)
	}
	if p.Status.Value == "superseded" && !p.SupersededBy.Pos.IsSet() {
		c.fail(13, p.Status.Pos, "name the successor: superseded_by: <uid or path>", "status is superseded but superseded_by: is not set")
	}
	if why := concreteVersion(p.Version.Value); live && p.Version.Value != "" && why != "" {
		c.fail(14, p.Version.Pos, "write a concrete version, e.g. version: \"1.0\" or \"2.1.3\"; only a draft may keep a placeholder", "status is %s but version %q %s", p.Status.Value, p.Version.Value, why)
	}
}

func (c checker) harnessFields() {
	p := c.p
	switch {
	case !p.TargetArtifactType.Pos.IsSet():
		c.fail(20, p.FrontmatterPos, "valid: "+strings.Join(TargetArtifactTypes, ", "), "a test-harness playbook has no target_artifact_type:")
	case p.TargetArtifactType.Value != "" && !contains(TargetArtifactTypes, p.TargetArtifactType.Value):
		c.fail(20, p.TargetArtifactType.Pos, ir.Suggest(p.TargetArtifactType.Value, TargetArtifactTypes), "target_artifact_type %q is not a recognized value", p.TargetArtifactType.Value)
	}
	switch {
	case !p.VerdictFormat.Pos.IsSet():
		c.fail(20, p.FrontmatterPos, "e.g. verdict_format: \""+VerdictFormats[0]+"\"", "a test-harness playbook has no verdict_format:")
	case p.VerdictFormat.Value != "" && !contains(VerdictFormats, normalizeVerdict(p.VerdictFormat.Value)):
		c.fail(20, p.VerdictFormat.Pos, "use a canonical tri-valued format, e.g. \""+VerdictFormats[0]+"\"", "verdict_format %q is not a canonical format", p.VerdictFormat.Value)
	}
	if m := p.Mode.Value; m != "" && !contains(Modes, m) {
		c.fail(20, p.Mode.Pos, ir.Suggest(m, Modes), "mode %q is not strict or skeptic", m)
	}
}

// normalizeVerdict spaces a verdict format as the canonical list does: "A / B / C".
func normalizeVerdict(s string) string {
	parts := strings.Split(s, "/")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, " / ")
}

func (c checker) body() {
	p := c.p
	bodyAt := ir.Pos{Line: max(p.BodyStart, 1), Col: 1}
	if p.IsPipeline() {
		for _, name := range PipelineSections {
			if p.Section(name) == nil {
				c.fail(7, bodyAt, "a pipeline has pipeline.capsule's sections: "+strings.Join(PipelineSections, ", "), "the pipeline's body has no ## %s section", name)
			}
		}
	} else {
		for _, name := range []string{"Intent", "Rules"} {
			if p.Section(name) == nil {
				c.fail(7, bodyAt, "add a ## "+name+" section", "the body has no ## %s section", name)
			}
		}
		c.executable(bodyAt)
		for _, name := range []string{"Outcomes", "Verification"} {
			if p.Section(name) == nil {
				c.fail(7, bodyAt, "add a ## "+name+" section", "the body has no ## %s section", name)
			}
		}
	}
	if s := p.Section("Outcomes"); s != nil && !required().MatchString(s.Text()) {
		c.fail(9, s.Title.Pos, "mark end states [REQUIRED] or [OPTIONAL], e.g. - [REQUIRED] the release is tagged", "§Outcomes has no [REQUIRED] outcome")
	}
	if s := p.Section("Verification"); s != nil {
		c.verification(s)
	}
	if s := p.Section("Rules"); s != nil {
		for _, l := range s.Lines {
			if listItem().MatchString(l.Text) && !modal().MatchString(l.Text) {
				c.warn(16, l.Pos, "phrase the rule with MUST, MUST NOT, SHOULD or SHOULD NOT so it can be judged passed or violated", "this rule is not phrased as a testable MUST or SHOULD")
			}
		}
	}
	if p.IsConcierge() {
		if s := p.Section("Post-Outcome Handoff"); s == nil {
			c.fail(19, bodyAt, "add ## Post-Outcome Handoff: bounce intents, inline intents, enforcement mechanism", "a concierge-paths playbook has no ## Post-Outcome Handoff section")
		} else if s.Text() == "" {
			c.fail(19, s.Title.Pos, "say which intents bounce back, which stay, and what enforces it", "## Post-Outcome Handoff is empty")
		}
	}
	if p.IsTestHarness() {
		s := p.Section("Report Format")
		switch {
		case s == nil:
			c.fail(20, bodyAt, "add ## Report Format after ## Verification: verdict line, evidence, findings table, convergence note", "a test-harness playbook has no ## Report Format section")
		case s.Text() == "":
			c.fail(20, s.Title.Pos, "give the verdict line, evidence, findings table and convergence note", "## Report Format is empty")
		default:
			if v := p.Section("Verification"); v != nil && v.Title.Pos.Line > s.Title.Pos.Line {
				c.fail(20, s.Title.Pos, "move it after ## Verification", "## Report Format comes before ## Verification")
			}
		}
	}
}

// executable checks the executable content: present (7), in exactly one shape (8), portable (17).
func (c checker) executable(bodyAt ir.Pos) {
	p := c.p
	var shapes []string
	var exec []*Section
	if s := p.Section("Groups"); s != nil {
		shapes = append(shapes, "## Groups (line "+fmt.Sprint(s.Title.Pos.Line)+")")
		exec = append(exec, s)
	}
	for _, name := range []string{"Steps", "Execution Steps"} {
		if s := p.Section(name); s != nil {
			shapes = append(shapes, "## "+name+" (line "+fmt.Sprint(s.Title.Pos.Line)+")")
			exec = append(exec, s)
		}
	}
	var numbered []*Section
	for _, s := range p.Sections {
		if stepN().MatchString(s.Title.Value) {
			numbered = append(numbered, s)
		}
	}
	if len(numbered) >= 2 {
		shapes = append(shapes, fmt.Sprintf("%d ## Step N: headings (from line %d)", len(numbered), numbered[0].Title.Pos.Line))
		exec = append(exec, numbered...)
	}
	switch {
	case len(shapes) == 0:
		hint := "add ## Groups, ## Steps, ## Execution Steps, or at least two ## Step N: headings"
		if len(numbered) == 1 {
			hint = "one ## Step N: heading is not a shape; add a second or use ## Steps"
		}
		c.fail(7, bodyAt, hint, "the body has no executable content")
	case len(shapes) > 1:
		c.fail(8, exec[len(exec)-1].Title.Pos, "keep one shape", "the body declares %s: a hybrid", strings.Join(shapes, " and "))
	}
	for _, s := range exec {
		for _, l := range s.Lines {
			if m := portability(l.Text); m != "" {
				c.warn(17, ir.Pos{Line: l.Pos.Line, Col: strings.Index(l.Text, m) + 1}, "resolve vault-specific names in the binding layer, not in the procedure", "executable content names %q", m)
			}
		}
	}
}

// portability returns the first vault-specific UID or path in text, or "".
func portability(text string) string {
	for _, uid := range vaultUID().FindAllString(text, -1) {
		if hasDigit().MatchString(uid) && hasHexAlpha().MatchString(uid) {
			return uid
		}
	}
	if m := vaultPath().FindStringSubmatch(text); m != nil {
		return m[2]
	}
	return ""
}

// verification finds the method §Verification declares (check 10).
func (c checker) verification(s *Section) {
	found := map[string]Line{}
	var order []string
	for _, l := range s.Lines {
		if m := methodLine().FindStringSubmatch(l.Text); m != nil {
			method := strings.ToLower(m[1])
			at := ir.Pos{Line: l.Pos.Line, Col: strings.Index(l.Text, m[1]) + 1}
			if !contains(Methods, method) {
				c.fail(10, at, ir.Suggest(method, Methods), "method %q is not one of the 6 methods", m[1])
				return
			}
			c.p.Verification = ir.String{Value: method, Pos: at}
			return
		}
		for _, m := range methodWord().FindAllStringIndex(l.Text, -1) {
			method := strings.ToLower(l.Text[m[0]:m[1]])
			if _, ok := found[method]; !ok {
				found[method] = Line{Pos: ir.Pos{Line: l.Pos.Line, Col: m[0] + 1}}
				order = append(order, method)
			}
		}
	}
	switch len(order) {
	case 0:
		c.fail(10, s.Title.Pos, "valid: "+strings.Join(Methods, ", "), "§Verification names no method")
	case 1:
		c.p.Verification = ir.String{Value: order[0], Pos: found[order[0]].Pos}
	default:
		c.fail(10, found[order[1]].Pos, "declare one with a line `method: "+order[0]+"`", "§Verification names %d methods (%s); declare one", len(order), strings.Join(order, ", "))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
