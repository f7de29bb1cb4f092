package ghactions

import (
	"encoding/json"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghproxy"
)

// The model proxy of the agent job (docs/gh-actions.md#the-model-proxy): a step before the agent
// starts autonomy as the model proxy, the only step that holds the credential; the agent's step
// gets the proxy's URL and a placeholder key through $GITHUB_ENV; the last steps stop it, put the
// usage in the step summary (failing the job past the budget) and upload the transcript.

// defaultTranscriptDays is how long the transcript artifact is kept unless
// policy.box.gh-actions.transcript_days says otherwise (the reference keeps .agent-run/ 30 days).
const defaultTranscriptDays = 30

// transcriptArtifact is the artifact holding the transcript and the usage.
const transcriptArtifact = "autonomy-transcript"

// modelBox is policy.box.gh-actions.model's proxy settings.
type modelBox struct {
	policy         ghproxy.Policy
	transcriptDays int
}

func defaultModelBox() modelBox {
	return modelBox{policy: ghproxy.Policy{Budget: ghproxy.DefaultBudget}, transcriptDays: defaultTranscriptDays}
}

// modelKey reads policy.box.gh-actions.model: a model name, or { name, budget, prices }.
func (r *boxReader) modelKey(b *box, v *yaml.Node) {
	const example = "e.g. model: gpt-5-codex, or model: { name: gpt-5-codex, budget: { requests: 250, cost_usd: 2 } }"
	if v.Kind != yaml.MappingNode {
		b.model, _ = r.str(v, "model", example)
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch mk, mv := v.Content[i], v.Content[i+1]; mk.Value {
		case "name":
			b.model, _ = r.str(mv, "model.name", "e.g. name: gpt-5-codex")
		case "budget":
			r.budget(&b.proxy.policy.Budget, mv)
		case "prices":
			b.proxy.policy.Prices = r.prices(mv)
		default:
			r.errorf(mk, ir.Suggest(mk.Value, []string{"name", "budget", "prices"}), "model: unknown key %q", mk.Value)
		}
	}
}

// budget reads model.budget: { requests, tokens, cost_usd }; a key left out keeps its default,
// 0 is unlimited.
func (r *boxReader) budget(b *modelproxy.Budget, v *yaml.Node) {
	const example = "e.g. budget: { requests: 250, tokens: 2000000, cost_usd: 2 }"
	if v.Kind != yaml.MappingNode {
		r.errorf(v, example, "model.budget must be a mapping")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		switch bk, bv := v.Content[i], v.Content[i+1]; bk.Value {
		case "requests":
			b.Requests = int64(r.number(bv, "model.budget.requests", true))
		case "tokens":
			b.Tokens = int64(r.number(bv, "model.budget.tokens", true))
		case "cost_usd":
			b.CostUSD = r.number(bv, "model.budget.cost_usd", false)
		default:
			r.errorf(bk, ir.Suggest(bk.Value, []string{"requests", "tokens", "cost_usd"}), "model.budget: unknown key %q", bk.Value)
		}
	}
}

// prices reads model.prices: { MODEL: { input, cached_input, output } }, US dollars per million
// tokens; "*" prices every model not named.
func (r *boxReader) prices(v *yaml.Node) map[string]modelproxy.Price {
	const example = `e.g. prices: { gpt-5-codex: { input: 1.25, cached_input: 0.125, output: 10 }, "*": { input: 15, output: 75 } }`
	if v.Kind != yaml.MappingNode {
		r.errorf(v, example, "model.prices must be a mapping of model names to prices")
		return nil
	}
	out := map[string]modelproxy.Price{}
	for name, p := range ghproxy.DefaultPrices {
		out[name] = p
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		mk, mv := v.Content[i], v.Content[i+1]
		if mv.Kind != yaml.MappingNode {
			r.errorf(mv, example, "model.prices.%s must be a mapping: input, cached_input, output", mk.Value)
			continue
		}
		var p modelproxy.Price
		for j := 0; j+1 < len(mv.Content); j += 2 {
			pk, pv := mv.Content[j], mv.Content[j+1]
			n := r.number(pv, "model.prices."+mk.Value+"."+pk.Value, false)
			switch pk.Value {
			case "input":
				p.Input = n
			case "cached_input":
				p.CachedInput = n
			case "output":
				p.Output = n
			default:
				r.errorf(pk, ir.Suggest(pk.Value, []string{"input", "cached_input", "output"}), "model.prices.%s: unknown key %q", mk.Value, pk.Value)
			}
		}
		out[mk.Value] = p
	}
	return out
}

// number reads a non-negative number (an integer when integer is set).
func (r *boxReader) number(v *yaml.Node, what string, integer bool) float64 {
	f, err := strconv.ParseFloat(v.Value, 64)
	isInt := v.Tag == "!!int"
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || err != nil || f < 0 || (integer && !isInt) {
		kind := "a non-negative number"
		if integer {
			kind = "a non-negative integer"
		}
		r.errorf(v, "0 is unlimited", "%s must be %s", what, kind)
		return 0
	}
	return f
}

// transcriptDays reads policy.box.gh-actions.transcript_days: 1 to 90, GitHub's bounds.
func (r *boxReader) transcriptDays(b *box, v *yaml.Node) {
	n := r.number(v, "transcript_days", true)
	if n < 1 || n > 90 {
		r.errorf(v, "GitHub keeps an artifact 1 to 90 days", "transcript_days must be between 1 and 90")
		return
	}
	b.proxy.transcriptDays = int(n)
}

// modelAPI is the API the box's agent speaks, which the proxy forwards.
func (b *box) modelAPI() modelproxy.API {
	if b.credential.env == "ANTHROPIC_API_KEY" || b.credential.baseURLEnv == "ANTHROPIC_BASE_URL" {
		return modelproxy.Anthropic
	}
	return modelproxy.OpenAI
}

// proxyStep starts the model proxy: the one step of the job that holds the credential (a
// secret, or the token it mints by OIDC). Built once per compile.
func (c *compiler) proxyStep() mapping {
	if c.proxyStart != nil {
		return c.proxyStart
	}
	cred := c.box.credential
	env := mapping{}
	script := ""
	if cred.oidc {
		cred.oidcEnv(&env)
		script = oidcScript
	} else {
		env.add(cred.env, expr("secrets."+cred.secret))
		env.add(ghproxy.CredentialEnv, cred.env)
		// The repository variable AUTONOMY_MODEL_URL, when set, is the proxy's upstream.
		env.add(ghproxy.URLEnv, expr("vars.AUTONOMY_MODEL_URL"))
	}
	policy, _ := json.Marshal(c.box.proxy.policy) // plain data: cannot fail
	env.add(ghproxy.APIEnv, string(c.box.modelAPI()))
	env.add(ghproxy.PolicyEnv, literalValue(string(policy)))
	script += `"$AUTONOMY_BIN" gh model-proxy` + "\n"
	c.proxyStart = c.emit.sharedMap(mapping{{key: "name", value: "Start the model proxy"}, {key: "env", value: env}, {key: "run", value: literal(script)}})
	return c.proxyStart
}

// dropSudoScript takes sudo away before the agent runs: the model proxy holds the credential in
// its memory, and the agent runs as the same user; without sudo, and with ptrace restricted to
// descendants (Ubuntu's default, kernel.yama.ptrace_scope=1), it cannot read another process's
// memory. GitHub's hosted runners grant passwordless sudo through /etc/sudoers.d, and their
// user is in the docker group (root through the socket): docker is stopped first. Where either
// cannot be taken away (or ptrace is open) the job says so in a warning rather than failing.
const dropSudoScript = `if sudo -n true 2>/dev/null; then
  sudo -n systemctl stop docker.socket docker.service 2>/dev/null || true
  sudo -n find /etc/sudoers.d -mindepth 1 -maxdepth 1 -type f -delete || true
fi
if sudo -n true 2>/dev/null; then
  echo "::warning::sudo is still available to the agent: it could read the model credential from the model proxy's memory (docs/gh-actions.md#the-model-proxy)"
elif [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" = 0 ]; then
  echo "::warning::ptrace is unrestricted (kernel.yama.ptrace_scope=0): the agent could read the model credential from the model proxy's memory (docs/gh-actions.md#the-model-proxy)"
fi
if [ -w /var/run/docker.sock ]; then
  echo "::warning::the docker socket is writable: the agent could become root through it and read the model credential from the model proxy's memory (docs/gh-actions.md#the-model-proxy)"
fi
`

// dropSudoStep runs dropSudoScript between the proxy's start and the agent.
func dropSudoStep() mapping {
	return mapping{{key: "name", value: "Drop sudo"}, {key: "run", value: literal(dropSudoScript)}}
}

// usageSteps end the job whatever happened before: the usage in the step summary (the job fails
// past the budget, its annotation saying so) and the transcript uploaded. Built once per compile.
func (c *compiler) usageSteps() seq {
	if c.proxyEnd != nil {
		return c.proxyEnd
	}
	dir := expr("runner.temp") + "/" + plain(ghproxy.Dir)
	with := mapping{{key: "name", value: transcriptArtifact},
		{key: "path", value: literal(string(dir) + "/" + ghproxy.TranscriptFile + "\n" + string(dir) + "/" + ghproxy.UsageFile + "\n" + string(dir) + "/" + ghproxy.EgressFile + "\n")},
		{key: "if-no-files-found", value: plain("ignore")},
		{key: "retention-days", value: c.box.proxy.transcriptDays}}
	c.proxyEnd = c.emit.sharedSeq(seq{
		c.emit.sharedMap(withIf(mapping{{key: "name", value: "Report the model usage"}, {key: "run", value: literal(`"$AUTONOMY_BIN" gh model-usage` + "\n")}}, "always()")),
		c.emit.sharedMap(withIf(uploadArtifact.step("Upload the transcript", with), "always()")),
	})
	return c.proxyEnd
}
