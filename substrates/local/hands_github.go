package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghlimit"
	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/substrates"
)

// The effects on work items for codeHost github (docs/tools.md, "On the local runner"). The MCP
// server of a session runs in the session's environment (its allowlist: no token), so it does
// not write to GitHub itself: it checks the call, spends its cap in the store (the tool:<name>
// event, whose message is the input) and waits. The session's supervisor, which runs outside
// the session in the environment the operator started the runner with, holds the token
// (GH_TOKEN, else GITHUB_TOKEN; the API at GITHUB_API_URL): it reads the session's pending
// effects from the store, checks each again against the actor's installed capabilities and caps
// (a forged row gets no further than a tool call would), applies it, and writes the outcome
// back under the effect's number, which the MCP server returns to the model. Each effect is
// claimed before it is applied, so it is applied at most once; one the MCP server gave up on is
// claimed as abandoned and never applied.

// githubTools are the tools the runner realizes on GitHub for codeHost github.
var githubTools = []string{tools.Comment, tools.CreateItem, tools.SetState}

const (
	// effectWait is how long a tool call waits for the supervisor to apply its effect.
	effectWait = 2 * time.Minute
	// effectPoll is how often the waiting call and the supervisor look at the store.
	effectPoll = 100 * time.Millisecond
	// inlineLimitWait is the longest rate limit the supervisor sits out within a call; a longer
	// one refuses the effects until it lifts, which the model reads.
	inlineLimitWait = 10 * time.Second
)

// githubOutcome is what became of one effect, stored under effectKey(seq).
type githubOutcome struct {
	// State is applying (claimed by the supervisor), done, or abandoned (by the waiting call).
	State   string `json:"state"`
	Outcome string `json:"outcome,omitempty"`
	Refused string `json:"refused,omitempty"`
}

func effectKey(seq int64) string { return "github-effect:" + strconv.FormatInt(seq, 10) }

// onGitHub says whether the installation's work items are on GitHub.
func (r *Runner) onGitHub() bool { return r.In.Runner.CodeHost == "github" }

// GitHubEffect is what the model reads of an effect the runner applied on GitHub.
type GitHubEffect struct {
	Applied string `json:"applied"`
}

// viaRunner spends the call's cap and has the session's supervisor apply it on GitHub.
func (h *Hands) viaRunner(ctx context.Context, tool string, in tools.Input) (any, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	seq, err := h.r.caller.spendSeq(ctx, tool, string(raw))
	if err != nil {
		return nil, err
	}
	o, err := h.r.awaitEffect(ctx, seq, effectWait)
	if err != nil {
		return nil, err
	}
	if o.Refused != "" {
		return nil, &tools.Refused{Tool: tool, Reason: o.Refused}
	}
	return GitHubEffect{Applied: o.Outcome}, nil
}

// awaitEffect waits for the outcome of effect seq; past wait, it abandons the effect unless the
// supervisor has claimed it.
func (r *Runner) awaitEffect(ctx context.Context, seq int64, wait time.Duration) (githubOutcome, error) {
	deadline := time.Now().Add(wait)
	t := time.NewTicker(effectPoll)
	defer t.Stop()
	for {
		var o githubOutcome
		abandon := time.Now().After(deadline) || ctx.Err() != nil
		err := r.Store.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			v, ok, err := tx.Meta(effectKey(seq))
			switch {
			case err != nil:
				return err
			case ok:
				return json.Unmarshal([]byte(v), &o)
			case abandon:
				o.State = "abandoned"
				b, _ := json.Marshal(o)
				return tx.SetMeta(effectKey(seq), string(b))
			}
			return nil
		})
		switch {
		case err != nil:
			return o, err
		case o.State == "done":
			return o, nil
		case abandon && o.State == "abandoned":
			return o, fmt.Errorf("the runner did not take this effect up within %s, and it will not be applied: is the session's supervisor running (autonomy runner get SESSION)?", wait)
		case abandon:
			return o, fmt.Errorf("the runner is still applying this effect after %s: it may yet land on GitHub; read the item before you try again", wait)
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// githubApplier applies one session's effects on GitHub, in its supervisor.
type githubApplier struct {
	r     *Runner
	id    string
	repo  ghwrite.Repo
	check *tools.Checker
	// unable says why no effect can be applied (no token, no repository); "" when they can.
	unable string
	// after is the last event looked at; until is when a rate limit lifts.
	after int64
	until time.Time
}

// newGitHubApplier prepares the applier of session s, with the runner's token (from its own
// environment, never the session's).
func (r *Runner) newGitHubApplier(s store.Session) *githubApplier {
	g := &githubApplier{r: r, id: s.ID}
	cfg, err := r.In.Actor(s.Actor)
	if err != nil {
		g.unable = err.Error()
		return g
	}
	g.check = &tools.Checker{Actor: s.Actor, Grants: tools.Grants(substrates.ParseCapabilities(cfg.Capabilities)), Max: cfg.ToolsMax}
	env := r.opts.Env
	token := runnerToken(env)
	if token == "" {
		g.unable = "the runner holds no GitHub token: the operator sets GH_TOKEN (or GITHUB_TOKEN) in the environment autonomy runner serve (or launch) starts in; it never reaches a session"
		return g
	}
	boxRepo := ""
	if ev := r.In.Runner.Events; ev != nil {
		boxRepo = ev.Repo
	}
	owner, name, err := r.githubRepo(boxRepo, sessionenv.Lookup(env, "GITHUB_REPOSITORY"))
	if err == nil {
		g.repo.Client, err = githubClient(token, sessionenv.Lookup(env, "GITHUB_API_URL"), nil)
	}
	if err != nil {
		g.unable = err.Error()
		return g
	}
	g.repo.Owner, g.repo.Name, g.repo.Label, g.repo.Record = owner, name, r.In.stateLabel, g.record
	return g
}

// stateLabel is the tracker's name of a lifecycle state (policy.box.taskStates, else the state).
func (in *Install) stateLabel(state string) string {
	var l Lifecycle
	if b, err := os.ReadFile(in.Path(LifecyclePath)); err == nil && json.Unmarshal(b, &l) == nil {
		for _, s := range l.States {
			if s.State == state && s.Name != "" {
				return s.Name
			}
		}
	}
	return state
}

// githubWhile applies session s's effects on GitHub until the returned function is called,
// which applies once more and waits for the loop to end. Without codeHost github it does nothing.
func (r *Runner) githubWhile(ctx context.Context, s store.Session) func() {
	if !r.onGitHub() {
		return func() {}
	}
	g := r.newGitHubApplier(s)
	return r.every(ctx, effectPoll, func() { g.applyPending(ctx) })
}

// every calls f every d until the returned function is called, which calls f once more after
// the loop has ended.
func (r *Runner) every(ctx context.Context, d time.Duration, f func()) func() {
	done, over := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(over)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		<-over
		f()
	}
}

// applyPending applies the effects the session asked for since the last look, and answers its
// reads of the work items (hands_github_reads.go), in order.
func (g *githubApplier) applyPending(ctx context.Context) {
	events, err := g.r.Store.Events(ctx, g.id, 0)
	if err != nil {
		return
	}
	for _, e := range events {
		if e.Seq <= g.after {
			continue
		}
		g.after = e.Seq
		tool, ok := githubTool(e.Kind)
		read := false
		if !ok {
			if tool, read = readTool(e.Kind); !read {
				continue
			}
		}
		ef := tools.Effect{Tool: tool, Actor: e.Actor, Session: e.Session, Input: json.RawMessage(e.Message)}
		claimed, err := g.claim(ctx, e.Seq)
		if err != nil || !claimed {
			if g.check != nil && !read {
				_, _ = g.check.Check(ef) // taken before (an earlier supervisor): it counts against the cap
			}
			continue
		}
		o := githubOutcome{State: "done"}
		o.Outcome, err = g.apply(ctx, ef)
		if err != nil {
			o.Refused = err.Error()
			var rf *tools.Refused
			if errors.As(err, &rf) {
				o.Refused = rf.Reason
			}
		}
		b, _ := json.Marshal(o)
		_ = g.r.Store.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error { return tx.SetMeta(effectKey(e.Seq), string(b)) })
	}
}

// githubTool is the tool whose call an event of kind records, when the runner applies it on GitHub.
func githubTool(kind string) (string, bool) {
	for _, t := range githubTools {
		if kind == toolEvent(t) {
			return t, true
		}
	}
	return "", false
}

// claim marks effect seq as being applied; false when the waiting call abandoned it first.
func (g *githubApplier) claim(ctx context.Context, seq int64) (bool, error) {
	claimed := false
	err := g.r.Store.Tx(ctx, func(tx *store.Tx) error {
		if _, ok, err := tx.Meta(effectKey(seq)); err != nil || ok {
			return err
		}
		claimed = true
		return tx.SetMeta(effectKey(seq), `{"state":"applying"}`)
	})
	return claimed, err
}

// apply checks one effect again, as the trusted side, and applies it on GitHub.
func (g *githubApplier) apply(ctx context.Context, e tools.Effect) (string, error) {
	if g.check == nil || g.unable != "" {
		return "", errors.New(g.unable)
	}
	var in tools.Input
	var err error
	if _, read := readTool(readEvent(e.Tool)); read {
		in, err = decodeRead(e)
	} else {
		in, err = g.check.Check(e)
	}
	if err != nil {
		return "", err
	}
	for try := 0; ; try++ {
		if now := time.Now(); now.Before(g.until) {
			return "", fmt.Errorf("GitHub's rate limit holds until %s: nothing was sent; try again after it", g.until.UTC().Format(time.RFC3339))
		}
		out, err := g.realize(ctx, in)
		if err == nil {
			return out, nil
		}
		d, kind, limited := ghlimit.Wait(err, time.Now())
		switch {
		case limited && d <= inlineLimitWait && try == 0:
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(d):
			}
			continue
		case limited:
			g.until = time.Now().Add(d)
			return "", fmt.Errorf("GitHub's %s rate limit: it was not applied; try again after %s", kind, g.until.UTC().Format(time.RFC3339))
		case ghwrite.TargetRefused(err):
			return "", fmt.Errorf("GitHub refused it: %v", err)
		}
		return "", fmt.Errorf("GitHub failed it: %v", err)
	}
}

// realize applies a checked effect.
func (g *githubApplier) realize(ctx context.Context, in tools.Input) (string, error) {
	if out, ok, err := g.answer(ctx, in); ok {
		return out, err
	}
	switch v := in.(type) {
	case *tools.CommentInput:
		return g.repo.Comment(ctx, v, false)
	case *tools.NewItem:
		return g.repo.CreateIssue(ctx, v, false)
	case *tools.StateChange:
		return g.repo.SetState(ctx, v, false)
	}
	return "", fmt.Errorf("%T is not applied on GitHub by the local runner", in)
}
