package workflow

import (
	"regexp"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
)

// secretPatterns recognize credentials by their shape. The diagnostic names the kind, never the
// value, so a report does not spread the secret further. Compiled on first use.
var secretPatterns = sync.OnceValue(func() []secretPattern {
	return []secretPattern{
		{"a GitHub token", regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`)},
		{"an API key (sk-…)", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`)},
		{"a Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
		{"an AWS access key", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
		{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
		{"a GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
		{"a private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
		{"a JSON web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
		{"a bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*`)},
		{"a password in a URL", regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@$]+@`)},
		{"a secret passed as a flag", regexp.MustCompile(`(?i)--?(token|password|passwd|secret|api[-_]?key|access[-_]?key|client[-_]?secret)(=|\s+)[^\s$-][^\s]*`)},
	}
})

// secretPattern is a kind of credential and its shape.
type secretPattern struct {
	kind string
	re   *regexp.Regexp
}

// secretKeys are substrings (lowercase) without which no pattern can match: most values hold
// none, and a substring search is far cheaper than the patterns.
var secretKeys = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox", "akia", "asia", "aiza", "glpat-",
	"private key", "eyj", "bearer", "://", "token", "passw", "secret", "key"}

func maySecret(s string) bool {
	lower := strings.ToLower(s)
	for _, k := range secretKeys {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// secretName matches the names of env vars and args that hold a credential.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(token|secret|passw(or)?d|api[-_]?key|private[-_]?key|credential|access[-_]?key)`)
})

const secretHint = "remove it from the spec and pass it by handle: $secrets.NAME"

// secrets reports values that look like credentials: by their shape anywhere in the spec, and by
// name for env vars and arg defaults that hold a literal instead of a handle.
func (v *validator) secrets() {
	w := v.w
	check := func(val ir.String) bool {
		if val.Value == "" || !maySecret(val.Value) {
			return false
		}
		for _, p := range secretPatterns() {
			if loc := p.re.FindStringIndex(val.Value); loc != nil {
				v.r.Errorf(w.place(val, val.Value[loc[0]:loc[1]], loc[0]), secretHint, "this value looks like a secret literal (%s)", p.kind)
				return true
			}
		}
		return false
	}
	check(w.Name)
	check(w.Description)
	for _, a := range w.Args {
		if a.Default != nil {
			if !check(*a.Default) && secretName().MatchString(a.Name.Value) && literal(a.Default.Value) {
				v.r.Errorf(a.Default.Pos, secretHint, "arg %q has a literal default; a secret is never written in the spec", a.Name.Value)
			}
		}
		check(a.Description)
	}
	for i, s := range w.Steps {
		for _, val := range []ir.String{s.Command, s.Description, s.Stdin, s.Prompt, s.Condition, s.Cwd} {
			check(val)
		}
		for _, e := range s.Env {
			if !check(e.Value) && secretName().MatchString(e.Name.Value) && literal(e.Value.Value) {
				v.r.Errorf(e.Value.Pos, strings.Replace(secretHint, "NAME", e.Name.Value, 1), "env %s of %s holds a literal; a secret is never written in the spec", e.Name.Value, stepName(i, s))
			}
		}
	}
}

// literal reports whether a value is written out rather than read from a reference.
func literal(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && !strings.HasPrefix(s, "$")
}

// SecretKind names the kind of credential s looks like by its shape ("" when none): for values
// outside a workflow that must hold no secret either, such as an MCP server's argv.
func SecretKind(s string) string {
	if !maySecret(s) {
		return ""
	}
	for _, p := range secretPatterns() {
		if p.re.MatchString(s) {
			return p.kind
		}
	}
	return ""
}
