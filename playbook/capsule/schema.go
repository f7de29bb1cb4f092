package capsule

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

var (
	hexUID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{8}$`) })
	// placeholder is a version suffix that says the version is not settled yet.
	placeholder = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(draft|wip|tbd|todo|placeholder|snapshot|unreleased|x{2,})`)
	})
	versionParts = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?`) })
)

// schemaRules checks what the seed's §2 schema and body-section floor require beyond the 21
// numbered checks: a uid of 8 hex digits, and a changelog (## Changelog, ## Revision History or a
// changelog: list) for a version above 1.0.
func (c checker) schemaRules() {
	p := c.p
	if u := p.UID.Value; p.UID.Pos.IsSet() && !hexUID().MatchString(u) {
		hint := "write 8 lowercase hex digits, e.g. uid: e7b3c509"
		if hexUID().MatchString(strings.ToLower(u)) {
			hint = "write it in lowercase: uid: " + strings.ToLower(u)
		}
		c.r.Errorf(p.UID.Pos, hint, "schema (uid: <8-hex>): uid %q is not 8 lowercase hex digits", u)
	}
	if above, ok := aboveOne(p.Version.Value); ok && above && !p.hasChangelog() {
		c.r.Errorf(p.Version.Pos, "add a ## Changelog (or ## Revision History) section with an entry per version, or a changelog: list in the frontmatter",
			"body floor (## Revision History or ## Changelog, required for version > 1.0): version %s has no changelog", p.Version.Value)
	}
}

// hasChangelog reports whether the playbook carries a changelog: a non-empty ## Changelog or
// ## Revision History section, or a non-empty changelog: list.
func (p *Playbook) hasChangelog() bool {
	if p.Changelog > 0 {
		return true
	}
	for _, name := range []string{"Changelog", "Revision History"} {
		if s := p.Section(name); s != nil && s.Text() != "" {
			return true
		}
	}
	return false
}

// aboveOne reports whether version is above 1.0 (ok is false when it does not start with a
// number): 1.0.1, 1.1 and 2 are; 1, 1.0 and 0.9 are not.
func aboveOne(version string) (above, ok bool) {
	m := versionParts().FindStringSubmatch(strings.TrimSpace(version))
	if m == nil {
		return false, false
	}
	for i, part := range m[1:] {
		n, _ := strconv.Atoi(part)
		if i == 0 && n > 1 || i > 0 && n > 0 {
			return true, true
		}
		if i == 0 && n < 1 {
			return false, true
		}
	}
	return false, true
}

// concreteVersion says why version is not concrete enough for a live playbook, or "".
func concreteVersion(version string) string {
	switch {
	case !concrete().MatchString(version):
		return "is not a concrete semver or decimal"
	case placeholder().MatchString(version):
		return fmt.Sprintf("carries the placeholder %q", placeholder().FindString(version))
	}
	return ""
}
