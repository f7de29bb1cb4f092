package ghactions

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
)

// The keys of policy.box.gh-actions that profiles written for the reference implementation
// (volter-ai/open-autonomy) use, with the reference's meanings. docs/migrating.md lists how each
// is realized here.
var referenceKeys = []string{
	"proxy_host", "oidc_audience", "bot_name", "bot_email",
	"propose_dispatch_checks", "propose_dispatch_reviews", "commit_signing", "private_egress_guard",
}

// The repository variables the reference's workflows read before the profile's fallback, and
// that the workflows compiled here honor the same way.
const (
	ProxyHostVar    = "PUBLIC_AGENT_PROXY_HOST"
	OIDCAudienceVar = "MODEL_PROXY_OIDC_AUDIENCE"
)

var (
	hostRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$`)
	})
	audienceRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:/@+-]+$`) })
	workflowRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+\.ya?ml$`) })
	// commitSigning lists the reference's commit signing modes.
	commitSigning = []string{"verified-api"}
)

// refBox is what the reference's keys set, with where each was written, so that a setting given
// under both spellings is refused at the second.
type refBox struct {
	proxyHost, audience   string
	proxyPos, audiencePos *yaml.Node
	botName, botEmail     *yaml.Node
	gitName, gitEmail     *yaml.Node // the project's own spelling (git.name, git.email)
	credentialKey         *yaml.Node
	// guard is private_egress_guard: the egress proxy refuses even a private address the
	// allowlist names literally (a name never reaches one).
	guard bool
}

func (r *boxReader) warnAt(n *yaml.Node, hint, format string, args ...any) {
	r.diags = append(r.diags, ir.Diagnostic{File: r.file, Pos: ir.Pos{Line: n.Line, Col: n.Column}, Severity: ir.Warning, Message: "policy.box.gh-actions." + fmt.Sprintf(format, args...), Hint: hint})
}

// referenceKey reads one of the reference's keys, or, for any other key, warns when it is a near
// miss of a key this substrate reads: a key nothing reads is carried in .autonomy/policy.json,
// never refused.
func (r *boxReader) referenceKey(b *box, k, v *yaml.Node) {
	rb := &b.ref
	switch k.Value {
	case "proxy_host":
		if s, ok := r.str(v, "proxy_host", "e.g. proxy_host: model-proxy.example.com"); ok {
			if !hostRe().MatchString(s) {
				r.errorf(v, "give a host name, optionally with :port, without https:// or a path", "proxy_host %q is not a host name", s)
				return
			}
			rb.proxyHost, rb.proxyPos = s, k
		}
	case "oidc_audience":
		if s, ok := r.str(v, "oidc_audience", "e.g. oidc_audience: model-proxy"); ok {
			if !audienceRe().MatchString(s) {
				r.errorf(v, "use letters, digits and . _ : / @ + -", "oidc_audience %q is not a valid audience", s)
				return
			}
			rb.audience, rb.audiencePos = s, k
		}
	case "bot_name":
		if s, ok := r.str(v, "bot_name", "e.g. bot_name: fleet-bot"); ok {
			b.gitName, rb.botName = s, k
		}
	case "bot_email":
		if s, ok := r.str(v, "bot_email", "e.g. bot_email: fleet-bot@users.noreply.github.com"); ok {
			b.gitEmail, rb.botEmail = s, k
		}
	case "propose_dispatch_checks", "propose_dispatch_reviews":
		list := r.argv(v, k.Value, "e.g. "+k.Value+": [security-gate.yml]")
		for i, w := range list {
			if !workflowRe().MatchString(w) {
				r.errorf(v.Content[i], "name a workflow file of .github/workflows, e.g. security-gate.yml", "%s: %q is not a workflow file name", k.Value, w)
			}
		}
		// Realized by autonomy gh propose, which reads them from .autonomy/policy.json.
	case "commit_signing":
		if s, ok := r.str(v, "commit_signing", "e.g. commit_signing: verified-api"); ok {
			if !slices.Contains(commitSigning, s) {
				r.errorf(v, ir.Suggest(s, commitSigning), "commit_signing %q is not a signing mode", s)
				return
			}
			// Realized by autonomy gh propose (verified-api: commits created through the Git
			// Data API, which GitHub signs).
		}
	case "private_egress_guard":
		if on, ok := r.flag(v, "private_egress_guard"); ok {
			b.ref.guard = on // egress.go
		}
	default:
		known := append(append([]string(nil), boxKeys...), referenceKeys...)
		if near := ir.Suggest(k.Value, known); strings.HasPrefix(near, "did you mean") {
			r.warnAt(k, near, "%s is carried verbatim and read by nothing", k.Value)
		}
	}
}

func (r *boxReader) flag(n *yaml.Node, what string) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		r.errorf(n, "write "+what+": true or false", "%s must be true or false", what)
		return false, false
	}
	return v, true
}

// reconcile finishes the box once every key is read: a setting given under both the
// reference's spelling and the project's own is an error, the reference's model proxy becomes
// the OIDC credential, and the keys not realized yet are warned about.
func (r *boxReader) reconcile(b *box) {
	rb := &b.ref
	both := func(ref, own *yaml.Node, refName, ownName string) {
		if ref == nil || own == nil {
			return
		}
		later := ref
		if own.Line > ref.Line || own.Line == ref.Line && own.Column > ref.Column {
			later = own
		}
		r.errorf(later, "keep one of them", "%s and %s both set the same thing; %s is the reference implementation's spelling", refName, ownName, refName)
	}
	both(rb.botName, rb.gitName, "bot_name", "git.name")
	both(rb.botEmail, rb.gitEmail, "bot_email", "git.email")
	both(rb.proxyPos, rb.credentialKey, "proxy_host", "credential")
	both(rb.audiencePos, rb.credentialKey, "oidc_audience", "credential")
	if (rb.proxyPos != nil || rb.audiencePos != nil) && rb.credentialKey == nil {
		// The env names are the agent's defaults, filled in by readBox.
		b.credential = credential{oidc: true, audience: rb.audience, proxyHost: rb.proxyHost, vars: true}
		if rb.proxyPos == nil {
			r.warnAt(rb.audiencePos, "add proxy_host: <host>, or set the variable", "oidc_audience is set without proxy_host: the model endpoint comes from the repository variable %s alone, and the job fails while it is unset", ProxyHostVar)
		}
		if rb.audiencePos == nil {
			r.warnAt(rb.proxyPos, "add oidc_audience: <audience>, or set the variable", "proxy_host is set without oidc_audience: the token's audience comes from the repository variable %s alone, and the job fails while it is unset", OIDCAudienceVar)
		}
	}
}

// expressionString quotes s as a GitHub expression string literal.
func expressionString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// oidcEnv is the env the OIDC minting reads: the audience and the model endpoint, from the
// profile, or for the reference's keys from the repository variables first.
func (cred credential) oidcEnv(env *mapping) {
	if !cred.vars {
		env.add("AUTONOMY_OIDC_AUDIENCE", literalValue(cred.audience))
		env.add("AUTONOMY_CREDENTIAL_ENV", cred.env)
		if cred.url != "" {
			env.add("AUTONOMY_MODEL_URL", literalValue(cred.url))
			env.add("AUTONOMY_MODEL_URL_ENV", cred.baseURLEnv)
		}
		return
	}
	aud := "vars." + OIDCAudienceVar
	if cred.audience != "" {
		aud += " || " + expressionString(cred.audience)
	}
	url := fmt.Sprintf("vars.%s && format('https://{0}', vars.%s)", ProxyHostVar, ProxyHostVar)
	if cred.proxyHost != "" {
		url += " || " + expressionString("https://"+cred.proxyHost)
	}
	env.add("AUTONOMY_OIDC_AUDIENCE", expr(aud))
	env.add("AUTONOMY_CREDENTIAL_ENV", cred.env)
	env.add("AUTONOMY_MODEL_URL", expr(url))
	env.add("AUTONOMY_MODEL_URL_ENV", cred.baseURLEnv)
}
