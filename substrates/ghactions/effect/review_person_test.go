package effect

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// referenceVerdict writes an open-autonomy.review.v1 result for pull request pr and head, and
// points re at that contract as the oa-fleet installs it.
func referenceVerdict(t *testing.T, w *world, re *Env, pr int, head string, human bool) string {
	t.Helper()
	re.ResultSchema = filepath.Join("..", "..", "..", "golden", "oa-fleet", "gh-actions", ".autonomy", "results", "open-autonomy.review.v1.json")
	name := "v-" + head[:7] + "-" + strconv.FormatBool(human) + ".json"
	write(t, w.root, name, `{"schema":"open-autonomy.review.v1","pr":`+strconv.Itoa(pr)+`,"headSha":"`+head+`","verdict":"success","outcome":"approved","summary":"fine code, but it changes the billing rules: a person must approve","findings":[],"humanApprovalRequired":`+strconv.FormatBool(human)+`}`)
	return filepath.Join(w.root, name)
}

// TestReviewerAsksForAPerson (attack14 finding 3): a reviewer's success with
// humanApprovalRequired: true approves the code, and a person must approve the change:
// agent-review is success, and human-approval is pending on that head with an ask bound to it,
// which the review's comment names; the same result again asks no second time.
func TestReviewerAsksForAPerson(t *testing.T) {
	w, p, head, re := proposedForReview(t)
	ctx := context.Background()
	v, err := Review(ctx, re, referenceVerdict(t, w, re, p.PR, head, true))
	if err != nil {
		t.Fatal(err)
	}
	if v.State != "success" {
		t.Errorf("agent-review is %q, want success: the reviewer approved the code", v.State)
	}
	gate, err := re.latestGate(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if gate == nil || gate.GetState() != "pending" {
		t.Fatalf("humanApprovalRequired: true, and %s on %s is %v with no ask of a person", HumanApprovalContext, head, gate)
	}
	asks, err := Asks(ctx, re, p.PR)
	if err != nil {
		t.Fatal(err)
	}
	if len(asks) != 1 || asks[0].Head != head || asks[0].Resolved != "" {
		t.Fatalf("asks on #%d: %+v, want one open ask bound to %s", p.PR, asks, head)
	}
	is, _ := w.fake.Issue(p.PR)
	if all := strings.Join(is.Comments, "\n"); !strings.Contains(all, "changes the billing rules") {
		t.Errorf("the ask does not say why the reviewer asks:\n%s", all)
	}
	if rs := is.Reviews; len(rs) == 0 || !strings.Contains(rs[len(rs)-1], "a maintainer must approve "+head) {
		t.Errorf("the review's comment does not say a person must approve the head: %q", rs)
	}

	// The same result again (a re-run): the open ask stands, no second one is posted.
	if _, err := Review(ctx, re, referenceVerdict(t, w, re, p.PR, head, true)); err != nil {
		t.Fatal(err)
	}
	if asks, _ := Asks(ctx, re, p.PR); len(asks) != 1 {
		t.Errorf("a second review of the same head posted another ask: %d asks", len(asks))
	}
	// The human-gate job on the pull request's events keeps it pending (no path needs a person,
	// but the ask bound to the head is open), even after a paths' success that raced the review.
	for _, raced := range []bool{false, true} {
		if raced {
			if err := re.postGate(ctx, head, "success", noHumanPath); err != nil {
				t.Fatal(err)
			}
		}
		g, err := CheckHumanGate(ctx, re)
		if err != nil {
			t.Fatal(err)
		}
		if gate, _ := re.latestGate(ctx, head); gate.GetState() != "pending" {
			t.Errorf("after the human gate ran (raced %v: %+v), %s is %s", raced, g, HumanApprovalContext, gate.GetState())
		}
	}

	// A new push is a new head: the ask bound to the old one holds nothing of it, and its
	// reviewer's result decides again.
	clone := filepath.Join(w.root, "more")
	run(t, w.root, "git", "clone", "--quiet", "--branch", p.Branch, w.origin, clone)
	write(t, clone, "src/b.go", "package a\n")
	run(t, clone, "git", "add", "-A")
	run(t, clone, "git", "commit", "--quiet", "-m", "more")
	run(t, clone, "git", "push", "--quiet", "origin", "HEAD:"+p.Branch)
	next := w.branch(p.Branch)
	if _, err := CheckHumanGate(ctx, re); err != nil {
		t.Fatal(err)
	}
	if gate, _ := re.latestGate(ctx, next); gate.GetState() != "success" {
		t.Errorf("the new head %s, touching no human-required path, has %s %s: the old head's ask held it", next, HumanApprovalContext, gate.GetState())
	}
	if _, err := Review(ctx, re, referenceVerdict(t, w, re, p.PR, next, true)); err != nil {
		t.Fatal(err)
	}
	if gate, _ := re.latestGate(ctx, next); gate.GetState() != "pending" {
		t.Errorf("its reviewer asks for a person on the new head, and %s is %s", HumanApprovalContext, gate.GetState())
	}
	if a, _ := re.openAskFor(ctx, p.PR, next); a == nil || a.Token == asks[0].Token {
		t.Errorf("the new head's ask: %+v, want a new one bound to %s", a, next)
	}
}

// TestReviewerAsksForAPersonQuotesABoundedSummary: under an inline contract that bounds no
// summary, a reviewer asking for a person with a summary longer than GitHub takes in a comment
// still gets its ask posted: the ask quotes the summary's start only.
func TestReviewerAsksForAPersonQuotesABoundedSummary(t *testing.T) {
	w, head, re := proposed(t)
	ctx := context.Background()
	write(t, w.root, "open.schema.json", `{"type": "object", "required": ["headSha", "verdict", "summary"], "properties": {"verdict": {"enum": ["approve"]},
	  "summary": {"type": "string"}, "headSha": {"type": "string"}, "humanApprovalRequired": {"type": "boolean"}}}`)
	re.ResultSchema = filepath.Join(w.root, "open.schema.json")
	long := strings.Repeat("billing ", 10000)
	write(t, w.root, "long.json", `{"verdict": "approve", "summary": "`+long+`", "headSha": "`+head+`", "humanApprovalRequired": true}`)
	if _, err := Review(ctx, re, filepath.Join(w.root, "long.json")); err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(re.Subject)
	a, err := re.openAskFor(ctx, n, head)
	if err != nil || a == nil {
		t.Fatalf("no ask bound to %s (%v)", head, err)
	}
	is, _ := w.fake.Issue(n)
	for _, c := range is.Comments {
		if strings.Contains(c, a.Token) && len([]rune(c)) > 65536 {
			t.Errorf("the ask is %d characters: GitHub refuses a comment over 65536", len([]rune(c)))
		}
	}
}

// The human-gate job reads no ask, the reviewer then asks for a person and reads its own
// pending gate, and only then does the gate job's "no human-required path" success land: the
// gate job checks again after posting, and holds the head for the open ask (an outsider's
// comment review can fire gate jobs through the reviewer's window at will).
func TestGateSuccessInFlightYieldsToThePersonAsk(t *testing.T) {
	w, p, head, re := proposedForReview(t)
	ctx := context.Background()
	verdict := referenceVerdict(t, w, re, p.PR, head, true)
	ge := w.env("control")
	ge.Subject = strconv.Itoa(p.PR)
	var fired atomic.Bool
	var reviewErr error
	w.fake.BeforeEach(func(method, path string) {
		if method == "POST" && strings.HasSuffix(path, "/statuses/"+head) && fired.CompareAndSwap(false, true) {
			_, reviewErr = Review(ctx, re, verdict) // while the gate job's success is in flight
		}
	})
	g, err := CheckHumanGate(ctx, ge)
	w.fake.BeforeEach(nil)
	if err != nil || reviewErr != nil {
		t.Fatal(err, reviewErr)
	}
	a, _ := re.openAskFor(ctx, p.PR, head)
	gate, _ := re.latestGate(ctx, head)
	if a == nil || gate.GetState() != "pending" {
		t.Errorf("ask %v, %s is %s (%s; the gate job said %q): want it pending on the open ask", a, HumanApprovalContext, gate.GetState(), gate.GetDescription(), g.State)
	}
}

// proposedForReview is a world where develop proposed a change, its pull request p and head, and
// the reviewer's environment for it.
func proposedForReview(t *testing.T) (*world, *Proposal, string, *Env) {
	t.Helper()
	w := newWorld(t)
	p, err := Propose(context.Background(), w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package a\n\nfunc A() {}\n"}))
	if err != nil {
		t.Fatal(err)
	}
	re := w.env("review")
	re.Subject = strconv.Itoa(p.PR)
	return w, p, w.branch(p.Branch), re
}
