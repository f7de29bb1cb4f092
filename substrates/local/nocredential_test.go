package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// TestLaunchWarnsWithoutAModelCredential: an agent whose sessions would run without a model proxy
// (no credential its CLI speaks in the environment) is named at launch, with the fix; with the
// credential, for a script actor, or with the agent overridden (AUTONOMY_AGENT) nothing is said.
func TestLaunchWarnsWithoutAModelCredential(t *testing.T) {
	dir := installFleet(t, skillFleet("codex"), true)
	for _, tc := range []struct {
		env   []string
		actor string
		want  string
	}{
		{[]string{"PATH=/usr/bin:/bin"}, "develop", "no OPENAI_API_KEY in this environment: develop's session runs its agent CLI with the CLI's own login"},
		{[]string{"PATH=/usr/bin:/bin", "OPENAI_API_KEY="}, "reviewer", "no OPENAI_API_KEY in this environment"},
		{[]string{"PATH=/usr/bin:/bin", "OPENAI_API_KEY=k"}, "develop", ""},
		{[]string{"PATH=/usr/bin:/bin", AgentEnv + "=my-agent --flag"}, "develop", ""},
		{[]string{"PATH=/usr/bin:/bin"}, "nobody", ""},
	} {
		got := newRunner(t, dir, Options{Env: tc.env}).NoModelCredential(tc.actor)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("env %v, actor %s: %q, want %q", tc.env, tc.actor, got, tc.want)
		}
	}
	script := installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  sweep:\n    behavior: scripts/sweep.sh\n    triggers: [{ dispatch: true }]\n",
		files: map[string]string{"scripts/sweep.sh": "#!/bin/sh\n"}}, true)
	if got := newRunner(t, script, Options{Env: []string{"PATH=/usr/bin:/bin"}}).NoModelCredential("sweep"); got != "" {
		t.Errorf("a script actor: %q, want nothing", got)
	}
}

// TestAnAnswerWithoutTheKeyIsRefusedWhereTheModelWasProxied: a session that reached its model
// through the proxy before would go on without it when answered from a shell without the key
// (the CLI's own login, unbudgeted, unsandboxed): refused, the token still valid; with the key,
// or for a session that never reached the proxy, the answer goes through.
func TestAnAnswerWithoutTheKeyIsRefusedWhereTheModelWasProxied(t *testing.T) {
	dir := installFleet(t, skillFleet("codex"), true)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	park := func(r *Runner, token string) store.Session {
		t.Helper()
		hash := playproto.HashToken(token)
		var s store.Session
		if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
			s = store.Session{Actor: "develop", Kind: "agent", Status: ir.Paused, Origin: "operator", TokenHash: hash,
				Reason: inputRequired + "which one?", StartedAt: time.Now(), CreatedAt: time.Now()}
			return tx.Insert(&s)
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.Store.SavePause(ctx, hash, s.ID, []byte(`{"next": 0}`)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	noKey := newRunner(t, dir, Options{Env: []string{"PATH=" + bin + ":/usr/bin:/bin"}})
	s := park(noKey, "rt_one")
	if err := noKey.Store.PutUsage(ctx, store.Usage{Session: s.ID, Actor: "develop"}); err != nil {
		t.Fatal(err)
	}
	_, err := noKey.Respond(ctx, s.ID, "rt_one", playproto.Answer{Text: "blog"}, "")
	if err == nil || !strings.Contains(err.Error(), "reached its model through the model proxy before") ||
		!strings.Contains(err.Error(), "no OPENAI_API_KEY in this environment") || !strings.Contains(err.Error(), "the token is still valid") {
		t.Fatalf("an answer without the key: %v", err)
	}
	if got, _, _ := noKey.Store.Get(ctx, s.ID); !parked(got) || got.TokenHash != playproto.HashToken("rt_one") {
		t.Fatalf("after the refusal the session is %s (token hash %q)", got.Status, got.TokenHash)
	}
	withKey := newRunner(t, dir, Options{Env: []string{"PATH=" + bin + ":/usr/bin:/bin", "OPENAI_API_KEY=k"}})
	if _, err := withKey.Respond(ctx, s.ID, "rt_one", playproto.Answer{Text: "blog"}, ""); err != nil && strings.Contains(err.Error(), "model proxy before") {
		t.Fatalf("an answer with the key: %v", err)
	}
	// A session that never reached the proxy: the answer is not refused for the key.
	other := park(noKey, "rt_two")
	if _, err := noKey.Respond(ctx, other.ID, "rt_two", playproto.Answer{Text: "blog"}, ""); err != nil && strings.Contains(err.Error(), "model proxy before") {
		t.Fatalf("a session that never reached the proxy: %v", err)
	}
}

// A session continued behind a new proxy (a step playbook's next segment) keeps what it used
// before: its usage adds up, and its run's budget is what is left of it.
func TestASessionsUsageAddsUpAcrossItsProxies(t *testing.T) {
	dir := installFleet(t, skillFleet("codex"), true)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	f, err := os.Create(filepath.Join(t.TempDir(), "transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := modelproxy.New(modelproxy.Config{Placeholder: modelproxy.NewPlaceholder(), OpenAIKey: "k", Transcript: f})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	close(done)
	prior := modelproxy.Usage{Requests: 2, InputTokens: 100, OutputTokens: 10, CostUSD: 0.5}
	s := store.Session{ID: "1-abcd", Actor: "develop"}
	r.stopProxy(&sessionProxy{prior: prior, proxy: proxy, transcript: f, cancel: func() {}, done: done}, s)
	u, ok, err := r.Store.GetUsage(ctx, s.ID)
	if err != nil || !ok || u.Requests != 2 || u.InputTokens != 100 || u.CostUSD != 0.5 {
		t.Fatalf("usage %+v, %v %v; want the earlier segments' kept", u, ok, err)
	}
	for _, c := range []struct {
		b    modelproxy.Budget
		want modelproxy.Budget
		why  string
	}{
		{modelproxy.Budget{Requests: 5}, modelproxy.Budget{Requests: 3}, ""},
		{modelproxy.Budget{Requests: 2}, modelproxy.Budget{}, "used 2 requests of its run's budget before"},
		{modelproxy.Budget{Tokens: 1000, CostUSD: 2}, modelproxy.Budget{Tokens: 890, CostUSD: 1.5}, ""},
		{modelproxy.Budget{CostUSD: 0.5}, modelproxy.Budget{}, "spent $0.5000 of its run's budget before"},
		{modelproxy.Budget{}, modelproxy.Budget{}, ""},
	} {
		got, why := runLeft(c.b, prior)
		if c.why != "" && !strings.Contains(why, c.why) || c.why == "" && (why != "" || got != c.want) {
			t.Errorf("runLeft(%+v): %+v %q, want %+v %q", c.b, got, why, c.want, c.why)
		}
	}
}

// TestLaunchWithoutAModelKeyIsRefused: with no key of its model in the environment, an agent's
// CLI would run with its own login, without the model proxy (this machine's network, no budget,
// no transcript, the login's credential within the model's reach): its launch is refused, naming
// both fixes, unless the operator sets AUTONOMY_AGENT_LOGIN=1; a session started anyway in such an
// environment (a supervisor given it) fails before its agent starts. A script actor, or an agent
// whose key is there, is not concerned.
func TestLaunchWithoutAModelKeyIsRefused(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("codex"), true)
	bin := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho ran > "+ran+"\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + bin + ":/usr/bin:/bin"
	ctx := context.Background()
	r := newRunner(t, dir, Options{Env: []string{path, "HOME=" + t.TempDir(), LoginEnv + "="}})
	_, err := r.Launch(ctx, LaunchRequest{Actor: "develop"})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "no OPENAI_API_KEY in this environment: develop's agent CLI would run with its own login, without the model proxy") ||
		!strings.Contains(err.Error(), "export the key of your model") || !strings.Contains(err.Error(), LoginEnv+"=1") {
		t.Fatalf("a launch without the key: %v", err)
	}
	if ss, _ := r.Store.List(ctx, store.ListOptions{All: true}); len(ss) != 0 {
		t.Errorf("a refused launch recorded %d sessions", len(ss))
	}
	// The supervisor's own check: a session recorded, then supervised without the key.
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "develop", Kind: "agent", Status: ir.Running, Origin: "operator", CreatedAt: time.Now()}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.start(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := waitEnded(t, r, s.ID)
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "would run with its own login") {
		t.Errorf("supervised without the key: %s: %s", got.Status, got.Reason)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the agent CLI ran")
	}
	// The operator's choice: it runs, and the launch is told what it gives up.
	login := newRunner(t, dir, Options{Env: []string{path, "HOME=" + t.TempDir(), LoginEnv + "=1"}})
	res, err := login.Launch(ctx, LaunchRequest{Actor: "develop"})
	if err != nil {
		t.Fatalf("with %s=1: %v", LoginEnv, err)
	}
	waitEnded(t, login, res.Session.ID)
	if _, err := os.Stat(ran); err != nil {
		t.Error("the agent CLI did not run")
	}
	if warn := login.NoModelCredential("develop"); !strings.Contains(warn, "runs its agent CLI with the CLI's own login") {
		t.Errorf("the launch's warning: %q", warn)
	}
	// With the key, no refusal.
	keyed := newRunner(t, dir, Options{Env: []string{path, "HOME=" + t.TempDir(), LoginEnv + "=", "OPENAI_API_KEY=k"}})
	if err := keyed.Preflight("develop"); err != nil {
		t.Errorf("with the key: %v", err)
	}
}

// keyless is an environment with no model key and no opt-in to the CLI's own login.
func keyless(t *testing.T) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", LoginEnv + "="}
}

// A session whose agent may not run here fails before its prelaunch runs, not after.
func TestNoPrelaunchForASessionRefusedItsLogin(t *testing.T) {
	t.Parallel()
	f := skillFleet("codex")
	f.yml = strings.Replace(f.yml, "    result: { schema: autonomy.review.v1 }\n", "    result: { schema: autonomy.review.v1 }\n    prelaunch: 'touch \"$AUTONOMY_DIR/prelaunched\"'\n", 1)
	dir := installFleet(t, f, true)
	r := newRunner(t, dir, Options{Env: keyless(t)})
	got := supervised(t, r, "reviewer")
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "no OPENAI_API_KEY") {
		t.Errorf("the session ended %s: %s", got.Status, got.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "prelaunched")); !os.IsNotExist(err) {
		t.Errorf("its prelaunch ran: %v", err)
	}
}
