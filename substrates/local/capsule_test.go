package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// capsule is a capsule playbook (seed 000) whose ## Verification is method.
func capsule(trigger, method string) string {
	return `---
type: playbook
title: Handle ` + trigger + `
version: "1.0"
status: active
owner: team
readers: [agent]
scope: single-session
tags: [test]
trigger: ` + trigger + `
created: 2026-05-20
locked_by: lead
locked_at: 2026-05-22
---

## Intent

Handle the item, so the test can see the verification method at work.

## Rules

- The agent MUST write its result.

## Steps

1. Do the work.
2. Write the result.

## Outcomes

- [REQUIRED] the result is written

## Verification

method: ` + method + `

How completion is proven.
`
}

// The agent (policy.box.local.agent) is a scripted fake: MODE=good writes a result passing the
// contract, bad one that fails it, fail exits 3. The reviewer approves, requests changes or
// reviews another digest as the file verdict in the installation says.
func capsuleFleet(t *testing.T) fleet {
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte(fakeCapsuleAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	return fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  signer:
    behavior: pb/sign.playbook.md
    triggers: [{ dispatch: true, params: { MODE: subject.text } }]
  checker:
    behavior: pb/check.playbook.md
    result: { schema: { type: object, required: [answer], properties: { answer: { type: integer } } } }
    triggers: [{ dispatch: true, params: { MODE: subject.text } }]
  selfie:
    behavior: pb/self.playbook.md
    triggers: [{ dispatch: true, params: { MODE: subject.text } }]
  peer:
    behavior: pb/peer.playbook.md
    capabilities: [code:propose]
    review: rev
    triggers: [{ dispatch: true, params: { MODE: subject.text } }]
  rev:
    behavior: scripts/review.sh
    capabilities: [code:review]
    result: { schema: autonomy.review.v1 }
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      agent: [` + agent + `]
`,
		files: map[string]string{
			"pb/sign.playbook.md":  capsule("sign-asked", "human-sign-off"),
			"pb/check.playbook.md": capsule("check-asked", "automated-check"),
			"pb/self.playbook.md":  capsule("self-asked", "self-attestation"),
			"pb/peer.playbook.md":  capsule("peer-asked", "peer-review"),
			"scripts/review.sh": `#!/bin/sh
id=${AUTONOMY_REF#session/}
digest=$(sha256sum "$AUTONOMY_DIR/.autonomy/state/results/$id.json" | cut -d' ' -f1)
verdict=$(cat "$AUTONOMY_DIR/verdict")
if [ "$verdict" = wait ]; then sleep 300; fi
if [ "$verdict" = other ]; then
  verdict=approve
  digest=0000000000000000000000000000000000000000
fi
printf '{"verdict": "%s", "summary": "looked", "headSha": "%s"}\n' "$verdict" "$digest" > "$AUTONOMY_RESULT"
`,
		},
	}
}

var fakeCapsuleAgent = `#!/bin/sh
cat > /dev/null
case "$MODE:$AUTONOMY_RESULT_SCHEMA" in
good:*autonomy.result.v1.json) ` + deliverResult + ` ;;
bad:*autonomy.result.v1.json) echo '{"status": "finished"}' > "$AUTONOMY_RESULT" ;;
good:*) echo '{"answer": 42}' > "$AUTONOMY_RESULT" ;;
bad:*) echo '{"answer": "many"}' > "$AUTONOMY_RESULT" ;;
fail:*) exit 3 ;;
esac
`

// waitStatus waits until session id satisfies ok.
func waitStatus(t *testing.T, r *Runner, id string, ok func(store.Session) bool) store.Session {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s, found, err := r.Store.Get(context.Background(), id)
		if err != nil || !found {
			t.Fatalf("get %s: %v", id, err)
		}
		if ok(s) {
			return s
		}
		if s.Status.Ended() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	s, _, _ := r.Store.Get(context.Background(), id)
	t.Fatalf("session %s: still %s (%s)", id, s.Status, s.Reason)
	return s
}

var signToken = regexp.MustCompile(`--token (stk_\S+)`)

func TestCapsuleHumanSignOff(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, capsuleFleet(t), false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()

	s := launch(t, r, LaunchRequest{Actor: "signer", Text: "good"})
	s = waitStatus(t, r, s.ID, parked)
	if s.Status != ir.Paused || !strings.Contains(Waiting(s), "verification human-sign-off") {
		t.Fatalf("the agent succeeded and the session is %s (%s), not waiting for the sign-off", s.Status, s.Reason)
	}
	time.Sleep(300 * time.Millisecond)
	if n, _, _ := r.Store.Get(ctx, s.ID); n.Status != ir.Paused {
		t.Fatalf("without the token the session became %s", n.Status)
	}
	m := signToken.FindStringSubmatch(readFile(t, s.LogPath))
	if m == nil {
		t.Fatalf("no sign-off token in the log:\n%s", readFile(t, s.LogPath))
	}
	var refused *RefusedError
	if _, err := r.Approve(ctx, s.ID, "stk_wrong", true, ""); !errors.As(err, &refused) {
		t.Fatalf("a wrong token: %v", err)
	}
	if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Done}); !errors.As(err, &refused) {
		t.Fatalf("done without the token: %v", err)
	}
	if n, _, _ := r.Store.Get(ctx, s.ID); n.Status != ir.Paused {
		t.Fatalf("after refusals the session is %s", n.Status)
	}
	// A step playbook's answer is no sign-off: refused, and the token stays valid.
	for _, a := range []stepsrun.Answer{{Text: "yes"}, {Cancel: true}} {
		if _, err := r.Respond(ctx, s.ID, m[1], a, ""); !errors.As(err, &refused) || !strings.Contains(err.Error(), "waits for a sign-off") {
			t.Fatalf("answer %+v to a sign-off: %v", a, err)
		}
	}
	n, err := r.Approve(ctx, s.ID, m[1], true, "read the diff")
	if err != nil || n.Status != ir.Done || !strings.Contains(n.Verified, "verification human-sign-off: signed off by") || n.Evidence != "read the diff" {
		t.Fatalf("sign-off: %+v %v", n, err)
	}
	if _, err := r.Approve(ctx, s.ID, m[1], true, ""); !errors.As(err, &refused) {
		t.Fatalf("a reused token: %v", err)
	}

	// Denied: failed, naming the method.
	d := launch(t, r, LaunchRequest{Actor: "signer", Text: "good"})
	d = waitStatus(t, r, d.ID, parked)
	if m = signToken.FindStringSubmatch(readFile(t, d.LogPath)); m == nil {
		t.Fatalf("no sign-off token in the log of the paused session:\n%s", readFile(t, d.LogPath))
	}
	if n, err := r.Approve(ctx, d.ID, m[1], false, ""); err != nil || n.Status != ir.Failed || !strings.Contains(n.Reason, "verification human-sign-off: the sign-off was denied") {
		t.Fatalf("deny: %+v %v", n, err)
	}
	// The agent failing: nothing to sign off.
	f := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "signer", Text: "fail"}).ID)
	if f.Status != ir.Failed || !strings.Contains(f.Reason, "verification human-sign-off: the agent did not succeed: exit status 3") {
		t.Fatalf("a failing agent: %s %s", f.Status, f.Reason)
	}
}

func TestCapsuleAutomatedCheckAndSelfAttestation(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, capsuleFleet(t), false)
	r := newRunner(t, dir, Options{})
	for _, c := range []struct {
		actor, mode string
		status      ir.SessionStatus
		want        string
	}{
		{"checker", "good", ir.Done, "verification automated-check: the result passed the actor's contract"},
		{"checker", "bad", ir.Failed, "verification automated-check: the agent did not succeed: exit status 0 but the result does not satisfy"},
		{"checker", "none", ir.Failed, "verification automated-check: the agent did not succeed: exit status 0 but no result"},
		{"selfie", "good", ir.Done, "verification self-attestation: the agent's own success"},
		// Self-attestation is the agent's word, and the word is its result: none, no success.
		{"selfie", "none", ir.Failed, "verification self-attestation: the agent did not succeed: exit status 0 but no result"},
		{"selfie", "bad", ir.Failed, "does not satisfy autonomy.result.v1: at the top level: missing property 'summary'; at /status: value must be one of \"done\", \"failed\" (got \"finished\")"},
		{"selfie", "fail", ir.Failed, "verification self-attestation: the agent did not succeed: exit status 3"},
	} {
		s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: c.actor, Text: c.mode}).ID)
		if s.Status != c.status || !strings.Contains(s.Reason+s.Verified, c.want) {
			t.Errorf("%s %s: %s (%s | %s), want %s with %q", c.actor, c.mode, s.Status, s.Reason, s.Verified, c.status, c.want)
		}
	}
}

func TestCapsulePeerReview(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, capsuleFleet(t), false)
	r := newRunner(t, dir, Options{})
	for _, c := range []struct {
		verdict string
		status  ir.SessionStatus
		want    string
	}{
		{"approve", ir.Done, "verification peer-review: approved by rev (session "},
		{"request-changes", ir.Failed, `did not approve (verdict "request-changes")`},
		{"other", ir.Failed, `the reviewer's verdict is on "0000000000000000000000000000000000000000", not on this session's result`},
	} {
		if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte(c.verdict), 0o644); err != nil {
			t.Fatal(err)
		}
		s := launch(t, r, LaunchRequest{Actor: "peer", Text: "good"})
		s = waitEnded(t, r, s.ID)
		if s.Status != c.status || !strings.Contains(s.Reason+s.Verified, c.want) {
			t.Errorf("%s: %s (%s | %s), want %s with %q", c.verdict, s.Status, s.Reason, s.Verified, c.status, c.want)
		}
		result := readFile(t, filepath.Join(dir, StateDir, "results", s.ID+".json"))
		sum := sha256.Sum256([]byte(result))
		if c.status == ir.Done && !strings.Contains(s.Verified, hex.EncodeToString(sum[:])) {
			t.Errorf("the approval does not name the digest of the result: %s", s.Verified)
		}
	}
	// The proposer waits while its reviewer has not ended; a reviewer session launched by hand
	// for the same session binds nothing (only the one the runner launched is waited for); the
	// bound reviewer cancelled fails it.
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(dir, "verdict"), []byte("wait"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := launch(t, r, LaunchRequest{Actor: "peer", Text: "good"})
	s = waitStatus(t, r, s.ID, parked)
	if !strings.Contains(Waiting(s), "verification peer-review: waiting for reviewer rev (session ") {
		t.Fatalf("waiting: %q", Waiting(s))
	}
	bound := regexp.MustCompile(`session (\S+)\)`).FindStringSubmatch(Waiting(s))[1]
	forged := launch(t, r, LaunchRequest{Actor: "rev", Ref: "session/" + s.ID})
	if _, err := r.Cancel(ctx, forged.ID); err != nil {
		t.Fatal(err)
	}
	waitEnded(t, r, forged.ID)
	var refused *RefusedError
	if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Done}); !errors.As(err, &refused) {
		t.Fatalf("done by hand: %v", err)
	}
	if n, _, _ := r.Store.Get(ctx, s.ID); n.Status != ir.Paused {
		t.Fatalf("a forged reviewer's end moved the session to %s (%s)", n.Status, n.Reason)
	}
	if _, err := r.Cancel(ctx, bound); err != nil {
		t.Fatal(err)
	}
	n := waitEnded(t, r, s.ID)
	if n.Status != ir.Failed || !strings.Contains(n.Reason, "verification peer-review: the reviewer's session "+bound+" ended cancelled") {
		t.Fatalf("after its reviewer was cancelled: %s (%s)", n.Status, n.Reason)
	}
}
