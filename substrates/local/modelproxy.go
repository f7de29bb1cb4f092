package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// TranscriptDir holds each proxied session's transcript, ID.jsonl: one modelproxy.Entry a line.
const TranscriptDir = StateDir + "/transcripts"

// TranscriptPath is where session id's transcript is kept; ok is false for an id the store does
// not make.
func (in *Install) TranscriptPath(id string) (string, bool) {
	if _, ok := in.logPath(id); !ok {
		return "", false
	}
	return in.Path(TranscriptDir + "/" + id + ".jsonl"), true
}

// sessionProxy is the model proxy the supervisor runs beside one preset session, outside its
// sandbox: it holds the runner's real credential, the agent only a placeholder and its URL.
type sessionProxy struct {
	// prior is what the session used before this proxy (a step playbook's earlier segments).
	prior      modelproxy.Usage
	proxy      *modelproxy.Proxy
	transcript *os.File
	cancel     context.CancelFunc
	done       <-chan error
	// key is the placeholder the agent holds; root the proxy's URL.
	key, root string
}

// proxied reports which presets' APIs a session's agent reaches through a model proxy: a skill's,
// or a step playbook's whose steps run the agent (one proxy, and one budget, for all its steps).
// A preset's session reaches its preset's API; an explicit agent command (policy.box.local.agent
// as a list of words) every preset's, each behind the same proxy. A session the operator's
// AUTONOMY_LOCAL_AGENT runs is not proxied.
func (sv *supervision) proxied() ([]agent.Preset, bool) {
	env := sv.r.opts.Env
	if sv.cfg.Steps {
		if _, ok, err := sv.r.Store.GetState(context.Background(), playproto.SessionKey(sv.s.ID)); err != nil || ok {
			env = withoutAgentOverride(env) // a continuation runs the agent its checkpoint saved
		}
	}
	return proxiedPresets(sv.cfg, env)
}

// withoutAgentOverride is env without AUTONOMY_LOCAL_AGENT: a step playbook's run continued from
// its checkpoint runs the agent command the checkpoint saved, whatever the override says now.
func withoutAgentOverride(env []string) []string { return sessionenv.With(env, AgentEnv+"=") }

// proxiedPresets is proxied for a session of cfg run in the environment env.
func proxiedPresets(cfg *ActorConfig, env []string) ([]agent.Preset, bool) {
	c := cfg.Command
	if !cfg.Skill && !cfg.Steps || c == nil || c.Script != nil || c.Preset == "" && !c.Box {
		return nil, false
	}
	if over, err := AgentOverride(sessionenv.Lookup(env, AgentEnv)); err != nil || over != nil {
		return nil, false
	}
	if c.Preset != "" {
		p, ok := agent.Lookup(c.Preset)
		return []agent.Preset{p}, ok
	}
	var all []agent.Preset
	for _, name := range agent.Names() {
		p, _ := agent.Lookup(name)
		all = append(all, p)
	}
	return all, true
}

// NoModelCredential is what a launch of actor should tell the operator when its sessions run
// without a model proxy because the runner's environment holds none of the credentials its agent
// CLI speaks (startProxy logs the same in the session's log): "" when they do, or when it runs
// no proxied agent.
func (r *Runner) NoModelCredential(actor string) string {
	return noModelCredential(r.In, r.opts.Env, actor)
}

// noModelCredential is Runner.NoModelCredential for the installation in and the environment env.
func noModelCredential(in *Install, env []string, actor string) string {
	cfg, err := in.Actor(actor)
	if err != nil {
		return ""
	}
	ps, proxied := proxiedPresets(cfg, env)
	if !proxied {
		return ""
	}
	names := missingKeys(env, ps)
	if names == "" {
		return ""
	}
	return fmt.Sprintf("no %s in this environment: %s's session runs its agent CLI with the CLI's own login, if any, without a model proxy, budget, transcript or network sandbox (export the key of your model, or of autonomy dev model: docs/quickstart.md; autonomy doctor checks it)", names, actor)
}

// missingKeys names the credentials of ps ("OPENAI_API_KEY or ANTHROPIC_API_KEY") when env holds
// none of them, and is "" when it holds one: a model proxy runs for a session then.
func missingKeys(env []string, ps []agent.Preset) string {
	var names []string
	for _, p := range ps {
		if sessionenv.Lookup(env, p.CredentialEnv) != "" {
			return ""
		}
		names = append(names, p.CredentialEnv)
	}
	return strings.Join(names, " or ")
}

// loginRefused says why a session of actor, whose agent CLI speaks the APIs of ps, may not run
// in the environment env ("" when it may): none of their keys is there, so no model proxy would
// run, and the CLI would use its own login with the runner's network, unbudgeted, with no
// transcript, its login's credential within the model's reach; unless the operator accepts
// that (LoginEnv=1).
func loginRefused(env []string, actor string, ps []agent.Preset) string {
	if sessionenv.Lookup(env, LoginEnv) == "1" {
		return ""
	}
	names := missingKeys(env, ps)
	if names == "" {
		return ""
	}
	return fmt.Sprintf("no %s in this environment: %s's agent CLI would run with its own login, without the model proxy (so with this machine's network, no budget, no transcript, and its login's credential within the model's reach); export the key of your model (for autonomy dev model's scripted model any value does: %s=trial, with its URL; docs/quickstart.md), or set %s=1 to run it so all the same (autonomy doctor checks it)", names, actor, ps[0].CredentialEnv, LoginEnv)
}

// loginRefusal is why this session's agent may not run here ("" when it may): its CLI would use
// its own login, no key of its APIs in the runner's environment, unless the operator accepts it
// (loginRefused). Launches refuse it (preflight); a session started otherwise (an answer, a
// resume from another shell) fails with it before its prelaunch and its agent start.
func (sv *supervision) loginRefusal() string {
	ps, proxied := sv.proxied()
	if !proxied {
		return ""
	}
	if ups, _ := sv.upstreams(ps); len(ups) > 0 {
		return ""
	}
	return loginRefused(sv.r.opts.Env, sv.s.Actor, ps)
}

// upstream is one API a session's proxy forwards: the preset that speaks it, the runner's
// credential for it and its base URL ("" for the provider's own).
type upstream struct {
	preset    agent.Preset
	key, base string
}

// upstreams are the APIs of ps whose credential the runner's environment holds, and the words
// naming the credentials of ps.
func (sv *supervision) upstreams(ps []agent.Preset) (ups []upstream, names []string) {
	for _, p := range ps {
		names = append(names, p.CredentialEnv)
		if key := sessionenv.Lookup(sv.r.opts.Env, p.CredentialEnv); key != "" {
			ups = append(ups, upstream{preset: p, key: key, base: sessionenv.Lookup(sv.r.opts.Env, p.BaseURLEnv)})
		}
	}
	return ups, names
}

// startProxy starts the session's model proxy and points its environment at it; stop records
// the usage and ends the proxy, and is never nil. Without a credential it forwards in the
// runner's environment no proxy runs: the CLI uses its own login, if any. ok is false when the
// session failed.
func (sv *supervision) startProxy(ctx context.Context) (stop func(), ok bool) {
	stop = func() {}
	ps, proxied := sv.proxied()
	if !proxied {
		return stop, true
	}
	ups, names := sv.upstreams(ps)
	if msg := sv.loginRefusal(); msg != "" {
		sv.end(ir.Failed, msg, "", nil)
		return stop, false
	}
	if len(ups) == 0 {
		who := ps[0].Bin
		if len(ps) > 1 {
			who = "your agent command"
		}
		fmt.Fprintf(sv.logf, "autonomy: no %s in the runner's environment: %s runs with its own login, without a model proxy, budget, transcript or network sandbox\n", strings.Join(names, " or "), who)
		return stop, true
	}
	budget, reason, err := sv.budget(ctx)
	if err == nil && reason != "" {
		err = errors.New(reason)
	}
	if msg := trialWithoutURL(sv.r.opts.Env, ps); msg != "" && err == nil {
		// Launches refuse it (preflight); a session started otherwise fails here, before its
		// agent sends the placeholder to the provider.
		err = errors.New(msg)
	}
	var sp *sessionProxy
	var prior store.Usage
	var before bool // a segment of the session ran behind a proxy before this one
	if err == nil {
		prior, before, err = sv.r.Store.GetUsage(ctx, sv.s.ID)
	}
	if err == nil {
		budget, reason = runLeft(budget, prior.Usage)
		if reason != "" {
			err = errors.New(reason)
		}
	}
	if err == nil {
		sp, err = sv.r.In.listenProxy(ctx, sv.s.ID, ups, budget, sv.policy().Prices, before)
	}
	if err == nil {
		// Recorded from the start: the session ran behind a proxy (an answer from a shell without
		// the key is refused), and what an earlier segment used is kept.
		sp.prior = prior.Usage
		if err = sv.r.Store.PutUsage(ctx, store.Usage{Session: sv.s.ID, Actor: sv.s.Actor, At: sv.r.opts.Now().UTC(), Usage: prior.Usage}); err != nil {
			sv.r.stopProxy(sp, sv.s)
		}
	}
	if err != nil {
		sv.end(ir.Failed, err.Error(), "", nil)
		return stop, false
	}
	for _, u := range ups {
		sv.env = sessionenv.With(sv.env, u.preset.CredentialEnv+"="+sp.placeholder(), u.preset.BaseURLEnv+"="+sp.url(u.preset))
	}
	sv.proxy = sp
	end := sv.end
	sv.end = func(status ir.SessionStatus, reason, verified string, code *int) {
		if why := sp.proxy.Exhausted(); why != "" && status == ir.Failed {
			reason = why + " (" + reason + ")"
		} else if f := sp.proxy.UpstreamFailure(); f != nil && status == ir.Failed {
			reason = upstreamReason(*f, ups) + " (" + reason + ")"
		}
		end(status, reason, verified, code)
	}
	return func() { sv.r.stopProxy(sp, sv.s) }, true
}

// upstreamReason is why a session whose agent failed after its model's upstream failed ended:
// the model's upstream, what went wrong and, when the runner's environment named no URL for that
// API, that the credential went to the provider itself.
func upstreamReason(f modelproxy.Failure, ups []upstream) string {
	reason := "the model's upstream " + f.String()
	for _, u := range ups {
		if (u.preset.Anthropic() == (f.API == modelproxy.Anthropic)) && u.base == "" {
			reason += "; " + u.preset.BaseURLEnv + " is unset, so " + u.preset.CredentialEnv + " went to the provider itself (autonomy doctor checks it)"
			break
		}
	}
	return reason
}

// dbPath is where the session's own processes open the runner's store: in the agent's jail when
// its own path is read-only there (wallState).
func (sv *supervision) dbPath() string {
	if sv.stateAt != "" {
		return filepath.Join(sv.stateAt, "state.db")
	}
	return DBPath(sv.r.In.Dir)
}

// policy is the actor's model policy, its defaults filled in.
func (sv *supervision) policy() ModelPolicy {
	if sv.cfg.Model != nil {
		return *sv.cfg.Model
	}
	return defaultModelPolicy()
}

// budget is the session's budget: the run's, bounded by what is left of the actor's daily budget
// since midnight in the installation's timezone. reason is set when nothing is left.
func (sv *supervision) budget(ctx context.Context) (modelproxy.Budget, string, error) {
	pol := sv.policy()
	b, d := pol.Budget, pol.Daily
	if d == (modelproxy.Budget{}) {
		return b, "", nil
	}
	now := sv.r.opts.Now().In(sv.r.In.Location)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	used, err := sv.r.Store.SumUsage(ctx, midnight, sv.s.Actor)
	if err != nil {
		return b, "", err
	}
	left := func(limit, spent int64, run *int64, unit string) string {
		if limit == 0 {
			return ""
		}
		if spent >= limit {
			return fmt.Sprintf("budget exhausted: actor %s used %d of its %d %s today", sv.s.Actor, spent, limit, unit)
		}
		if *run == 0 || *run > limit-spent {
			*run = limit - spent
		}
		return ""
	}
	if reason := left(d.Requests, used.Requests, &b.Requests, "requests"); reason != "" {
		return b, reason, nil
	}
	if reason := left(d.Tokens, used.Tokens(), &b.Tokens, "tokens"); reason != "" {
		return b, reason, nil
	}
	if d.CostUSD > 0 {
		if used.CostUSD >= d.CostUSD {
			return b, fmt.Sprintf("budget exhausted: actor %s spent $%.4f of its $%.2f today", sv.s.Actor, used.CostUSD, d.CostUSD), nil
		}
		if b.CostUSD == 0 || b.CostUSD > d.CostUSD-used.CostUSD {
			b.CostUSD = d.CostUSD - used.CostUSD
		}
	}
	return b, "", nil
}

// openAppend opens the file at path to append to it, when it is a regular file of one link that
// was not planted as a link (nil otherwise: createNew makes it anew).
func openAppend(path string) *os.File {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || links(fi) != 1 {
		f.Close()
		return nil
	}
	return f
}

// runLeft is the run's budget b less what the session used before (prior: a step playbook's
// earlier segments, one run), and why nothing is left when nothing is.
func runLeft(b modelproxy.Budget, prior modelproxy.Usage) (modelproxy.Budget, string) {
	if b.Requests > 0 {
		if b.Requests -= prior.Requests; b.Requests <= 0 {
			return b, fmt.Sprintf("budget exhausted: the session used %d requests of its run's budget before", prior.Requests)
		}
	}
	if b.Tokens > 0 {
		if b.Tokens -= prior.Tokens(); b.Tokens <= 0 {
			return b, fmt.Sprintf("budget exhausted: the session used %d tokens of its run's budget before", prior.Tokens())
		}
	}
	if b.CostUSD > 0 {
		if b.CostUSD -= prior.CostUSD; b.CostUSD <= 0 {
			return b, fmt.Sprintf("budget exhausted: the session spent $%.4f of its run's budget before", prior.CostUSD)
		}
	}
	return b, ""
}

// listenProxy starts a model proxy for session id on a free loopback port, forwarding ups, its
// transcript kept in TranscriptDir.
func (in *Install) listenProxy(ctx context.Context, id string, ups []upstream, b modelproxy.Budget, prices map[string]modelproxy.Price, appending bool) (*sessionProxy, error) {
	path, ok := in.TranscriptPath(id)
	if !ok {
		return nil, fmt.Errorf("%q is not a session id", id)
	}
	if err := os.MkdirAll(in.Path(TranscriptDir), 0o700); err != nil {
		return nil, fmt.Errorf("cannot make the transcript folder: %v", err)
	}
	var f *os.File
	var err error
	if appending {
		f = openAppend(path) // an earlier segment's transcript, continued
	}
	if f == nil {
		f, err = createNew(path, 0o600) // never through a link an agent put there
	}
	if err != nil {
		return nil, fmt.Errorf("cannot create its transcript: %v", err)
	}
	cfg := modelproxy.Config{Placeholder: modelproxy.NewPlaceholder(), Budget: b, Prices: prices, Transcript: f}
	var bases []string
	for _, u := range ups {
		bases = append(bases, u.preset.BaseURLEnv)
		if u.preset.Anthropic() {
			cfg.AnthropicKey, cfg.AnthropicUpstream = u.key, strings.TrimSuffix(u.base, "/")
		} else {
			cfg.OpenAIKey, cfg.OpenAIUpstream = u.key, strings.TrimSuffix(strings.TrimSuffix(u.base, "/"), "/v1")
		}
	}
	proxy, err := modelproxy.New(cfg)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot start its model proxy: %v (check %s)", err, strings.Join(bases, ", "))
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	url, done, err := modelproxy.Listen(pctx, proxy)
	if err != nil {
		cancel()
		f.Close()
		return nil, fmt.Errorf("cannot start its model proxy: %v", err)
	}
	return &sessionProxy{proxy: proxy, transcript: f, cancel: cancel, done: done, key: cfg.Placeholder, root: url}, nil
}

func (sp *sessionProxy) placeholder() string { return sp.key }

// url is what the preset's BaseURLEnv holds to reach the proxy.
func (sp *sessionProxy) url(p agent.Preset) string {
	if p.Anthropic() {
		return modelproxy.Anthropic.BaseURL(sp.root)
	}
	return modelproxy.OpenAI.BaseURL(sp.root)
}

// stopProxy ends the proxy once the agent is gone and records what the session used.
func (r *Runner) stopProxy(sp *sessionProxy, s store.Session) {
	sp.cancel()
	<-sp.done
	_ = sp.transcript.Close()
	u := sp.prior
	u.Add(sp.proxy.Usage())
	err := r.Store.PutUsage(context.Background(), store.Usage{Session: s.ID, Actor: s.Actor, At: r.opts.Now().UTC(), Usage: u})
	if err != nil {
		_ = r.Store.Log(context.Background(), store.Event{Session: s.ID, Actor: s.Actor, Kind: "usage", Message: err.Error()})
	}
}
