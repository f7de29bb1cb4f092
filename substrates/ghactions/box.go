package ghactions

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	agents "github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// The defaults of policy.box.gh-actions (documented in docs/gh-actions.md).
var (
	defaultRunsOn = "ubuntu-latest"
	// The identity commits of proposers carry unless the box names the fleet's bot.
	defaultGitName  = "github-actions[bot]"
	defaultGitEmail = "41898282+github-actions[bot]@users.noreply.github.com"
)

// box is policy.box.gh-actions: how this substrate fills the box every agent runs in.
type box struct {
	model string
	// agent is the preset (installed with its pinned version, run unsandboxed: the job's VM is
	// the sandbox) or the profile's own command; the behavior arrives on stdin.
	agent   agents.Choice
	install []string // argv; empty when nothing is installed
	// credSet is set when the profile gave its own credential.
	credSet    bool
	credential credential
	runsOn     []string
	roles      []string
	gitName    string
	gitEmail   string
	// requiredChecks are the status checks branch protection requires besides agent-review
	// (autonomy provision).
	requiredChecks []string
	// ref is what the reference implementation's keys set (refbox.go).
	ref refBox
	// autonomy is policy.box.gh-actions.autonomy: where the jobs build autonomy from (nil: from
	// what the compiling build names, install.go).
	autonomy *autonomyBox
	// proxy is the model proxy's budget, prices and transcript retention (modelproxy.go).
	proxy modelBox
	// egress is policy.box.gh-actions.egress.allow: the hosts the agent reaches through
	// the egress proxy besides the model proxy (egress.go).
	egress []egress.Rule
	// pausedLabel is policy.box.gh-actions.paused_label: the label that pauses one work item
	// (paused.go).
	pausedLabel string
}

// autonomyBox is policy.box.gh-actions.autonomy: a git repository and a full commit SHA.
type autonomyBox struct {
	repository, ref string
	pos             ir.Pos
}

// commitRe is a full commit SHA (SHA-1, or SHA-256 for a repository that uses it).
var commitRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`) })

// credential is how the agent gets its model credential.
type credential struct {
	// secret names a repository secret, handed to the agent step as env var env.
	secret string
	env    string
	// oidc: the job mints a GitHub OIDC token for audience and hands it over as env, with url
	// (the model proxy that accepts it) as baseURLEnv.
	oidc       bool
	audience   string
	url        string
	baseURLEnv string
	// vars: the reference's proxy_host/oidc_audience, read from the repository variables first
	// (ProxyHostVar, OIDCAudienceVar), the profile's values being the fallbacks.
	vars      bool
	proxyHost string
}

var (
	envNameRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	runnerNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
	boxKeys      = []string{"model", "agent", "install", "credential", "runsOn", "trustedRoles", "git", "requiredChecks", "autonomy", "tools", "transcript_days", "egress", "paused_label"}
)

// boxReader reads policy.box.gh-actions, collecting every problem.
type boxReader struct {
	file  string
	diags ir.Diagnostics
}

func (r *boxReader) errorf(n *yaml.Node, hint, format string, args ...any) {
	r.diags = append(r.diags, ir.Diagnostic{File: r.file, Pos: ir.Pos{Line: n.Line, Col: n.Column}, Severity: ir.Error, Message: "policy.box.gh-actions." + fmt.Sprintf(format, args...), Hint: hint})
}

// readBox reads the box with its defaults filled in.
func readBox(p *ir.Profile) (box, ir.Diagnostics) {
	b := box{runsOn: []string{defaultRunsOn}, roles: Roles, pausedLabel: effect.DefaultPausedLabel, gitName: defaultGitName, gitEmail: defaultGitEmail, proxy: defaultModelBox()}
	b.agent, _ = agents.Parse(nil)
	r := &boxReader{file: p.File}
	if n := boxNode(p, r); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			r.key(&b, n.Content[i], n.Content[i+1])
		}
		r.reconcile(&b)
	}
	// The credential defaults to the one the preset reads (a custom command: OpenAI's); a token
	// minted for the model proxy (the reference's proxy_host/oidc_audience) takes the same name.
	credEnv, urlEnv := "OPENAI_API_KEY", "OPENAI_BASE_URL"
	if !b.agent.Custom() {
		credEnv, urlEnv = b.agent.Preset.CredentialEnv, b.agent.Preset.BaseURLEnv
	}
	if !b.credSet && !b.credential.oidc {
		b.credential = credential{secret: credEnv, env: credEnv}
	}
	if b.credential.env == "" {
		b.credential.env = credEnv
	}
	if b.credential.baseURLEnv == "" {
		b.credential.baseURLEnv = urlEnv
	}
	// The credential reaches the agent step as env: it must not shadow a param (env names are
	// case-insensitive to GitHub).
	for _, name := range []string{b.credential.env, b.credential.baseURLEnv} {
		if name == "" {
			continue
		}
		for _, a := range p.Actors {
			for _, t := range a.Triggers {
				for _, prm := range t.Params {
					if strings.EqualFold(prm.Name.Value, name) {
						r.diags = append(r.diags, ir.Diagnostic{File: p.File, Pos: prm.Name.Pos, Severity: ir.Error,
							Message: fmt.Sprintf("actor %q: param %s has the name policy.box.gh-actions.credential gives the model credential", a.Name.Value, prm.Name.Value),
							Hint:    "rename the param, or the credential's env"})
					}
				}
			}
		}
	}
	if !b.agent.Custom() && b.install == nil {
		b.install = b.agent.Preset.Install()
	}
	return b, r.diags
}

// boxNode returns policy.box.gh-actions, or its github alias (warned), or nil; r (when not nil)
// collects the problems: both spellings given is an error.
func boxNode(p *ir.Profile, r *boxReader) *yaml.Node {
	box := p.Policy.Box
	if box == nil || box.Kind != yaml.MappingNode {
		return nil
	}
	var found, foundKey *yaml.Node
	for i := 0; i+1 < len(box.Content); i += 2 {
		k := box.Content[i]
		if k.Value != Name && k.Value != "github" {
			continue
		}
		if found != nil && r != nil {
			r.diags = append(r.diags, ir.Diagnostic{File: r.file, Pos: ir.Pos{Line: k.Line, Col: k.Column}, Severity: ir.Error,
				Message: fmt.Sprintf("policy.box.%s and policy.box.%s are both given; they are one setting", foundKey.Value, k.Value), Hint: "keep policy.box." + Name + " only"})
			continue
		}
		if k.Value == "github" && r != nil {
			r.diags = append(r.diags, ir.Diagnostic{File: r.file, Pos: ir.Pos{Line: k.Line, Col: k.Column}, Severity: ir.Warning,
				Message: "policy.box.github is the deprecated name of policy.box." + Name, Hint: "write " + Name})
		}
		found, foundKey = box.Content[i+1], k
	}
	return found
}

func (r *boxReader) key(b *box, k, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return // a null value means "not set": the default stands
	}
	switch k.Value {
	case "model", "transcript_days", "egress":
		r.jobKey(b, k, v) // egress.go
	case "agent":
		var probs []agents.Problem
		b.agent, probs = agents.Parse(v)
		for _, pr := range probs {
			sev := ir.Error
			if pr.Warning {
				sev = ir.Warning
			}
			r.diags = append(r.diags, ir.Diagnostic{File: r.file, Pos: ir.Pos{Line: pr.Node.Line, Col: pr.Node.Column}, Severity: sev, Message: "policy.box.gh-actions." + pr.Message, Hint: pr.Hint})
		}
	case "install":
		b.install = r.argv(v, "install", "e.g. install: [npm, install, --global, \"@openai/codex@0.169.0\"], or [] for none")
		if b.install == nil {
			b.install = []string{}
		}
	case "credential":
		b.ref.credentialKey = k
		b.credSet = true
		r.credential(b, v)
	case "runsOn":
		if v.Kind == yaml.ScalarNode {
			s, ok := r.str(v, "runsOn", "e.g. runsOn: ubuntu-latest")
			if ok {
				b.runsOn = []string{s}
			}
		} else {
			b.runsOn = r.argv(v, "runsOn", "e.g. runsOn: [self-hosted, linux]")
		}
		for _, s := range b.runsOn {
			if !runnerNameRe().MatchString(s) {
				r.errorf(v, "use runner labels: letters, digits, '.', '_' and '-'", "runsOn: %q is not a runner label", s)
			}
		}
		if len(b.runsOn) == 0 {
			b.runsOn = []string{defaultRunsOn}
		}
	case "requiredChecks":
		// Read by autonomy provision (from .autonomy/policy.json): the status checks branch
		// protection requires besides agent-review.
		b.requiredChecks = r.argv(v, "requiredChecks", "e.g. requiredChecks: [ci, lint]")
	case "trustedRoles":
		roles := r.argv(v, "trustedRoles", "e.g. trustedRoles: [OWNER, MEMBER]")
		for i, role := range roles {
			if !contains(Roles, role) {
				hint := "list some of " + strings.Join(Roles, ", ")
				if contains(allRoles, role) {
					hint = role + " includes people outside the repository's collaborators; trustedRoles may only narrow " + strings.Join(Roles, ", ")
				}
				r.errorf(v.Content[i], hint, "trustedRoles: %q is not a trusted role", role)
				return
			}
		}
		if len(roles) == 0 {
			r.errorf(v, "list at least OWNER, or remove trustedRoles for the default", "trustedRoles is empty: no one could trigger the gated events")
			return
		}
		b.roles = roles
	case "git":
		if v.Kind != yaml.MappingNode {
			r.errorf(v, "e.g. git: { name: fleet-bot, email: fleet-bot@example.com }", "git must be a mapping")
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			switch gk, gv := v.Content[i], v.Content[i+1]; gk.Value {
			case "name":
				b.gitName, _ = r.str(gv, "git.name", "e.g. name: fleet-bot")
				b.ref.gitName = gk
			case "email":
				b.gitEmail, _ = r.str(gv, "git.email", "e.g. email: fleet-bot@example.com")
				b.ref.gitEmail = gk
			default:
				r.errorf(gk, ir.Suggest(gk.Value, []string{"name", "email"}), "git: unknown key %q", gk.Value)
			}
		}
	case "autonomy":
		b.autonomy = r.autonomy(k, v)
	case "paused_label":
		b.pausedLabel = r.pausedLabel(v) // paused.go
	case "tools":
		r.tools(v) // safeoutputs.go; realized by autonomy gh mcp and apply from .autonomy/policy.json
	default:
		r.referenceKey(b, k, v)
	}
}

// autonomy reads policy.box.gh-actions.autonomy: { repository: URL, ref: COMMIT }.
func (r *boxReader) autonomy(k, v *yaml.Node) *autonomyBox {
	const example = "e.g. autonomy: { repository: https://github.com/you/autonomy, ref: <full commit SHA> }"
	if v.Kind != yaml.MappingNode {
		r.errorf(v, example, "autonomy must be a mapping")
		return nil
	}
	a := &autonomyBox{pos: ir.Pos{Line: k.Line, Col: k.Column}}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch ak, av := v.Content[i], v.Content[i+1]; ak.Value {
		case "repository":
			a.repository, _ = r.str(av, "autonomy.repository", example)
			if strings.HasPrefix(a.repository, "-") || strings.ContainsAny(a.repository, " \t\n") {
				r.errorf(av, "a URL git can fetch from, e.g. https://github.com/you/autonomy", "autonomy.repository: %q is not a repository URL", a.repository)
			}
		case "ref":
			a.ref, _ = r.str(av, "autonomy.ref", example)
			if a.ref != "" && !commitRe().MatchString(a.ref) {
				r.errorf(av, "write the full commit SHA, as git rev-parse "+a.ref+" prints it: a branch or tag can move, a commit cannot", "autonomy.ref: %q is not a full commit SHA", a.ref)
			}
		default:
			r.errorf(ak, ir.Suggest(ak.Value, []string{"repository", "ref"}), "autonomy: unknown key %q", ak.Value)
		}
	}
	return a
}

func (r *boxReader) credential(b *box, v *yaml.Node) {
	if v.Kind != yaml.MappingNode || len(v.Content) != 2 {
		r.errorf(v, "e.g. credential: { secret: OPENAI_API_KEY } or credential: { oidc: { audience: model-proxy, url: https://proxy.example/v1 } }", "credential must be a mapping with one key: secret or oidc")
		return
	}
	k, val := v.Content[0], v.Content[1]
	switch k.Value {
	case "secret":
		if val.Kind == yaml.ScalarNode {
			s, ok := r.str(val, "credential.secret", "e.g. secret: OPENAI_API_KEY")
			if ok && r.envName(val, s, "credential.secret") {
				b.credential = credential{secret: s, env: s}
			}
			return
		}
		if val.Kind != yaml.MappingNode {
			r.errorf(val, "e.g. secret: OPENAI_API_KEY, or secret: { name: MODEL_KEY, env: OPENAI_API_KEY }", "credential.secret must be a name or a mapping")
			return
		}
		c := credential{}
		for i := 0; i+1 < len(val.Content); i += 2 {
			switch sk, sv := val.Content[i], val.Content[i+1]; sk.Value {
			case "name":
				c.secret, _ = r.str(sv, "credential.secret.name", "e.g. name: MODEL_KEY")
				r.envName(sv, c.secret, "credential.secret.name")
			case "env":
				c.env, _ = r.str(sv, "credential.secret.env", "e.g. env: OPENAI_API_KEY")
				r.envName(sv, c.env, "credential.secret.env")
			default:
				r.errorf(sk, ir.Suggest(sk.Value, []string{"name", "env"}), "credential.secret: unknown key %q", sk.Value)
			}
		}
		if c.secret == "" {
			r.errorf(val, "e.g. secret: { name: MODEL_KEY, env: OPENAI_API_KEY }", "credential.secret has no name")
			return
		}
		if c.env == "" {
			c.env = c.secret
		}
		b.credential = c
	case "oidc":
		if val.Kind != yaml.MappingNode {
			r.errorf(val, "e.g. oidc: { audience: model-proxy, url: https://proxy.example/v1 }", "credential.oidc must be a mapping")
			return
		}
		c := credential{oidc: true}
		for i := 0; i+1 < len(val.Content); i += 2 {
			switch ok, ov := val.Content[i], val.Content[i+1]; ok.Value {
			case "audience":
				c.audience, _ = r.str(ov, "credential.oidc.audience", "e.g. audience: model-proxy")
			case "url":
				c.url, _ = r.str(ov, "credential.oidc.url", "e.g. url: https://proxy.example/v1")
				if c.url != "" && !strings.HasPrefix(c.url, "https://") {
					r.errorf(ov, "the token is a bearer credential: send it over https only", "credential.oidc.url %q is not an https URL", c.url)
				}
			case "env":
				c.env, _ = r.str(ov, "credential.oidc.env", "e.g. env: OPENAI_API_KEY")
				r.envName(ov, c.env, "credential.oidc.env")
			case "baseUrlEnv":
				c.baseURLEnv, _ = r.str(ov, "credential.oidc.baseUrlEnv", "e.g. baseUrlEnv: OPENAI_BASE_URL")
				r.envName(ov, c.baseURLEnv, "credential.oidc.baseUrlEnv")
			default:
				r.errorf(ok, ir.Suggest(ok.Value, []string{"audience", "url", "env", "baseUrlEnv"}), "credential.oidc: unknown key %q", ok.Value)
			}
		}
		if c.audience == "" {
			r.errorf(val, "e.g. oidc: { audience: model-proxy }", "credential.oidc has no audience")
			return
		}
		b.credential = c
	default:
		r.errorf(k, ir.Suggest(k.Value, []string{"secret", "oidc"}), "credential: unknown kind %q", k.Value)
	}
}

// envName checks that name can be an env var (or secret) name the job sets.
func (r *boxReader) envName(n *yaml.Node, name, what string) bool {
	if name == "" {
		return false
	}
	if !envNameRe().MatchString(name) {
		r.errorf(n, "use letters, digits and _, not starting with a digit", "%s: %q is not a valid name", what, name)
		return false
	}
	for _, p := range []string{"GITHUB_", "RUNNER_", "ACTIONS_", "AUTONOMY_", "GH_", "GIT_"} {
		if strings.HasPrefix(strings.ToUpper(name), p) {
			r.errorf(n, "choose a name without the "+p+" prefix", "%s: %q is reserved by GitHub Actions, autonomy, gh or git", what, name)
			return false
		}
	}
	return true
}

func (r *boxReader) str(n *yaml.Node, what, example string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.errorf(n, example, "%s must be a string", what)
		return "", false
	}
	if n.Value == "" {
		r.errorf(n, example, "%s is empty", what)
		return "", false
	}
	return n.Value, true
}

// argv reads a command as a list of words, so no word is ever split or reinterpreted by a shell.
func (r *boxReader) argv(n *yaml.Node, what, example string) []string {
	if n.Kind != yaml.SequenceNode {
		r.errorf(n, example+": one word per item, never a shell string", "%s must be a list of words", what)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		s, ok := r.str(c, what+" item", example)
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
