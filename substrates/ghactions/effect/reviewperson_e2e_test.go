//go:build unix

package effect_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// TestReviewerAsksForAPersonEndToEnd: through the generated workflows, a reviewer under
// open-autonomy.review.v1 approves the code of a proposal that touches no human-required path,
// and asks that a person approve the change (humanApprovalRequired: true). The propose job armed
// auto-merge and the human gate passed by the paths; the review job posts agent-review success,
// and with ci green the pull request still does not merge: human-approval is pending on its head,
// with an ask bound to it, through the human-gate job's runs too. A maintainer's /agent approve
// of that ask makes the gate success, and GitHub's auto-merge merges it.
func TestReviewerAsksForAPersonEndToEnd(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sdlc")
	copyDir(t, profileDir("sdlc"), dir)
	yml := filepath.Join(dir, "ir.yml")
	data, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	const was = "result: { schema: autonomy.review.v1 }"
	if !strings.Contains(string(data), was) {
		t.Fatalf("profiles/sdlc no longer says %q", was)
	}
	if err := os.WriteFile(yml, []byte(strings.Replace(string(data), was, "result: { schema: open-autonomy.review.v1 }", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFleetMerging(t, dir, map[string]string{"ada": "admin", "bob": "admin"}, "", true)
	p := f.proposeFiles(map[string]string{"greeting.txt": "hello\n"})
	n, head := p.N, p.Head
	if is, _ := f.fake.Issue(n); !is.AutoMerge {
		t.Fatalf("auto-merge is not armed on #%d", n)
	}
	if g := f.gateOf(head); g.State != "success" {
		t.Fatalf("the human gate by the paths is %+v, want success (no human-required path)", g)
	}

	// The review job, on the reviewer's verdict.
	verdicts := t.TempDir()
	verdict, _ := json.Marshal(map[string]any{"schema": "open-autonomy.review.v1", "pr": n, "headSha": head, "verdict": "success", "outcome": "approved",
		"summary": "The code is sound; it changes what customers are billed, so a person must approve it.", "findings": []string{}, "humanApprovalRequired": true})
	if err := os.WriteFile(filepath.Join(verdicts, "verdict.json"), verdict, 0o644); err != nil {
		t.Fatal(err)
	}
	f.r.artifacts["4242/autonomy-review"] = verdicts
	if out, ran := f.r.job(f.wf("reviewer"), "review", f.values(nil, "workflow_dispatch", map[string]string{"PR": strconv.Itoa(n)}), false); !ran {
		t.Fatalf("the review job was skipped\n%s", out)
	}
	if err := postStatus(f, head, "ci", "success"); err != nil {
		t.Fatal(err)
	}
	var review string
	for _, s := range f.fake.Statuses(head) {
		if s.Context == effect.StatusContext {
			review = s.State
		}
	}
	if review != "success" {
		t.Errorf("%s on %s is %q, want success: the reviewer approved the code", effect.StatusContext, head, review)
	}
	f.gateJob(n, "pull_request_target") // an edit of the pull request evaluates its gate again
	is, _ := f.fake.Issue(n)
	if is.Merged {
		t.Fatalf("#%d merged with no person's approval (gate %+v)", n, f.gateOf(head))
	}
	if g := f.gateOf(head); g.State != "pending" {
		t.Fatalf("the human gate is %+v, want pending until a maintainer approves", g)
	}
	if ok, why := f.fake.Mergeable(n); ok || !strings.Contains(why, effect.HumanApprovalContext) {
		t.Fatalf("mergeable with the reviewer's ask open (%v, %s)", ok, why)
	}
	if asks := strings.Count(strings.Join(is.Comments, "\n"), "<!-- autonomy:ask "); asks != 1 {
		t.Fatalf("%d asks on #%d, want one:\n%q", asks, n, is.Comments)
	}

	f.command(n, "ada", "OWNER", "/agent approve "+f.askToken(n), false)
	if g := f.gateOf(head); g.State != "success" {
		t.Fatalf("after the maintainer's approval the gate is %+v", g)
	}
	if is, _ := f.fake.Issue(n); !is.Merged || !strings.EqualFold(is.MergedHead, head) {
		ok, why := f.fake.Mergeable(n)
		t.Fatalf("#%d did not merge its head %s once approved (merged %v from %s; mergeable %v: %s)", n, head, is.Merged, is.MergedHead, ok, why)
	}
}
