package local

import (
	"bufio"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

var seamFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  pm:
    behavior: scripts/idle.sh
    capabilities: [agent:launch@worker, agent:list]
    triggers: [{ cron: "*/10 * * * *" }]
  boss:
    behavior: scripts/idle.sh
    capabilities: [agent:launch, agent:list, agent:update, agent:cancel]
    triggers: [{ dispatch: true }]
  mute:
    behavior: scripts/idle.sh
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true }]
  worker:
    behavior: scripts/idle.sh
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
  approver:
    kind: human
    behavior: humans/approver.md
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true, params: { ITEM: subject.ref, ASK: subject.text } }]
`,
	files: map[string]string{
		"scripts/idle.sh":    "#!/bin/sh\nsleep 300\n" + scriptDone,
		"humans/approver.md": "# Approve or decline\n",
	},
}

func TestHumanSeam(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, seamFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	res, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "7", Text: "ship it?\n## forged heading"})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Session
	if s.Status != ir.Running || !strings.HasPrefix(res.Token, "atk_") {
		t.Fatalf("launch: %+v token %q", s, res.Token)
	}
	attention := readFile(t, filepath.Join(dir, StateDir, "attention.md"))
	if !strings.Contains(attention, s.ID) || strings.Contains(attention, res.Token) || strings.Contains(attention, "\n## forged") {
		t.Fatalf("attention.md:\n%s", attention)
	}
	stored, _, _ := r.Store.Get(ctx, s.ID)
	if stored.TokenHash == "" || strings.Contains(stored.TokenHash, res.Token) {
		t.Fatalf("the token is not stored as a hash only: %q", stored.TokenHash)
	}
	var refused *RefusedError
	for _, p := range []ir.Patch{
		{Status: ir.Done, Evidence: "approved"},                      // no token
		{Status: ir.Done, Token: "atk_wrong", Evidence: "approved"},  // wrong token
		{Status: ir.Done, Token: res.Token},                          // no evidence
		{Status: ir.Done, Token: res.Token, Evidence: "   "},         // blank evidence
		{Status: ir.Paused, Token: res.Token, Evidence: "approved"},  // not a resolution
		{Status: ir.Running, Token: res.Token, Evidence: "approved"}, // not a resolution
	} {
		if _, err := r.Update(ctx, s.ID, p); !errors.As(err, &refused) {
			t.Errorf("%+v: %v, want refused", p, err)
		}
		if got, _, _ := r.Store.Get(ctx, s.ID); got.Status != ir.Running {
			t.Fatalf("a refused update changed the ask to %s", got.Status)
		}
	}
	// Time passing and ticks never complete an ask.
	if _, err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := r.Get(ctx, s.ID); got.Status != ir.Running {
		t.Fatalf("the ask became %s by itself", got.Status)
	}
	done, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "approved in #7"})
	if err != nil || done.Status != ir.Done {
		t.Fatalf("redeem: %v %v", done.Status, err)
	}
	if done.Evidence != "approved in #7" || done.ResolvedBy == "" || done.EndedAt.IsZero() || done.TokenHash != "" {
		t.Fatalf("resolution not recorded: %+v", done)
	}
	if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "again"}); !errors.As(err, &refused) {
		t.Errorf("the token redeemed twice: %v", err)
	}
	if strings.Contains(readFile(t, filepath.Join(dir, StateDir, "attention.md")), s.ID) {
		t.Errorf("a resolved ask is still in attention.md")
	}
	// Cancel retracts.
	res2, _ := r.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "8"})
	if ok, err := r.Cancel(ctx, res2.Session.ID); !ok || err != nil {
		t.Fatalf("retract: %v %v", ok, err)
	}
	if got, _, _ := r.Store.Get(ctx, res2.Session.ID); got.Status != ir.Cancelled {
		t.Fatalf("retracted ask is %s", got.Status)
	}
}

// inSession opens a runner as the calling session of actor.
func inSession(t *testing.T, dir string, r *Runner, actor string) *Runner {
	t.Helper()
	var s store.Session
	err := r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		s = store.Session{Actor: actor, Kind: "agent", Status: ir.Running, Origin: "operator", CreatedAt: time.Now()}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	return newRunner(t, dir, Options{Session: s.ID})
}

func TestCapabilityEnforcement(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, seamFleet, false)
	op := newRunner(t, dir, Options{})
	ctx := context.Background()
	var denied *DeniedError

	mute := inSession(t, dir, op, "mute")
	if _, err := mute.Launch(ctx, LaunchRequest{Actor: "worker"}); !errors.As(err, &denied) || !strings.Contains(err.Error(), "agent:launch") {
		t.Errorf("launch without agent:launch: %v", err)
	}
	if _, err := mute.List(ctx, false); !errors.As(err, &denied) {
		t.Errorf("list without agent:list: %v", err)
	}
	if _, _, err := mute.Get(ctx, "1-xxxx"); !errors.As(err, &denied) {
		t.Errorf("get without agent:list: %v", err)
	}
	if _, err := mute.Tick(ctx); !errors.As(err, &denied) {
		t.Errorf("tick from a session: %v", err)
	}

	pm := inSession(t, dir, op, "pm")
	if _, err := pm.Launch(ctx, LaunchRequest{Actor: "boss"}); !errors.As(err, &denied) || !strings.Contains(err.Error(), "scoped") {
		t.Errorf("agent:launch@worker launching boss: %v", err)
	}
	w, err := pm.Launch(ctx, LaunchRequest{Actor: "worker", Ref: "3"})
	if err != nil {
		t.Fatalf("agent:launch@worker launching worker: %v", err)
	}
	if w.Session.Origin != "session:"+pm.caller.session.ID || w.Session.Params["ITEM"] != "3" {
		t.Errorf("launch from a session: %+v", w.Session)
	}
	if _, err := pm.Cancel(ctx, w.Session.ID); !errors.As(err, &denied) {
		t.Errorf("cancel without agent:cancel: %v", err)
	}
	if _, err := pm.Update(ctx, w.Session.ID, ir.Patch{Status: ir.Paused}); !errors.As(err, &denied) {
		t.Errorf("update without agent:update: %v", err)
	}
	boss := inSession(t, dir, op, "boss")
	if ok, err := boss.Cancel(ctx, w.Session.ID); !ok || err != nil {
		t.Errorf("cancel with agent:cancel: %v %v", ok, err)
	}

	// Denials are recorded.
	evs, err := op.Store.Events(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == "denied" {
			n++
		}
	}
	if n != 7 {
		t.Errorf("%d denials recorded, want 7", n)
	}

	// A session that ended, or never existed, grants nothing.
	if _, err := New(dir, Options{Session: "999-none"}); !errors.As(err, &denied) {
		t.Errorf("unknown AUTONOMY_SESSION: %v", err)
	}
	op.Cancel(ctx, boss.caller.session.ID)
	if _, err := New(dir, Options{Session: boss.caller.session.ID}); !errors.As(err, &denied) {
		t.Errorf("ended AUTONOMY_SESSION: %v", err)
	}
	op.Cancel(ctx, pm.caller.session.ID)
	op.Cancel(ctx, mute.caller.session.ID)
}

// An ask to a person has no output: runner logs prints its events, and -f follows them until it
// is resolved.
func TestLogsOfAnAskAreItsEvents(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, seamFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	res, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "7", Text: "ship it?"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.ID
	if _, _, err := r.Logs(ctx, id); err == nil || !strings.Contains(err.Error(), "prints its events") {
		t.Fatalf("Logs of an ask: %v", err)
	}
	var now strings.Builder
	if err := r.FollowLogs(ctx, id, false, &now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(now.String(), "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "is an ask to a person (running)") || !strings.Contains(lines[1], "  engaged  ask engaged by the operator") {
		t.Fatalf("runner logs of an open ask:\n%s", now.String())
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- r.FollowLogs(ctx, id, true, pw)
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	var head string
	for range 2 { // the ask's first line and its engagement, as printed before it is resolved
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		head += l
	}
	if head != now.String() {
		t.Fatalf("runner logs -f began with\n%s, want\n%s", head, now.String())
	}
	followed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(br)
		followed <- string(b)
	}()
	if _, err := r.Update(ctx, id, ir.Patch{Status: ir.Done, Token: res.Token, Evidence: "approved in #7"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("logs -f did not return once the ask was resolved")
	}
	out := <-followed
	if !strings.Contains(out, "  resolved  done by the operator: approved in #7\n") {
		t.Fatalf("runner logs -f of an ask resolved meanwhile, after its first lines:\n%s", out)
	}
}

// A person sees an ask's text only under a param that takes subject.text: a --text none takes is
// refused, saying how to forward it, not dropped.
func TestAnAsksTextNoParamTakesIsRefused(t *testing.T) {
	t.Parallel()
	f := seamFleet
	f.yml += `  mutehuman:
    kind: human
    behavior: humans/approver.md
    capabilities: [tasks:converse]
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`
	dir := installFleet(t, f, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	_, err := r.Launch(ctx, LaunchRequest{Actor: "mutehuman", Ref: "7", Text: "approve the release?"})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), `actor "mutehuman" is a person who would never see --text`) || !strings.Contains(err.Error(), "ASK: subject.text") {
		t.Fatalf("an ask's text no param takes: %v", err)
	}
	// An agent's too: it gets the text only as a param (worker's trigger takes subject.ref only).
	_, err = r.Launch(ctx, LaunchRequest{Actor: "worker", Ref: "7", Text: "fix the login page"})
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), `actor "worker" is an agent who would never see --text`) {
		t.Fatalf("an agent's text no param takes: %v", err)
	}
	if ss, _ := r.Store.List(ctx, store.ListOptions{All: true}); len(ss) != 0 {
		t.Fatalf("a refused launch was recorded: %+v", ss)
	}
	// Without text, or to a person whose trigger takes it, the ask is made.
	if _, err := r.Launch(ctx, LaunchRequest{Actor: "mutehuman", Ref: "7"}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Launch(ctx, LaunchRequest{Actor: "approver", Ref: "7", Text: "ship it?"})
	if err != nil || res.Session.Params["ASK"] != "ship it?" {
		t.Fatalf("approver: %v %+v", err, res.Session.Params)
	}
}
