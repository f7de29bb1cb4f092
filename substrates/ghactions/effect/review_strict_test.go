package effect

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewReadsWhatItValidated: an advisory reviewer's inline contract allows only comment
// and request-changes. A verdict that also carries "Verdict": "approve" (a case twin, which
// encoding/json would read as the verdict) or "verdict" twice is refused, and a verdict whose
// only spelling is "VERDICT": "approve" is not read as an approval: no success is posted.
func TestReviewReadsWhatItValidated(t *testing.T) {
	w, head, re := proposed(t)
	ctx := context.Background()
	write(t, w.root, "advisory.schema.json", `{"type": "object", "required": ["headSha", "summary"],
	  "properties": {"verdict": {"enum": ["comment", "request-changes"]}, "summary": {"type": "string"}, "headSha": {"type": "string"}}}`)
	re.ResultSchema = filepath.Join(w.root, "advisory.schema.json")
	bound := `"summary": "ok", "headSha": "` + head + `"`
	for name, doc := range map[string]string{
		"case twin": `{"verdict": "comment", ` + bound + `, "Verdict": "approve"}`,
		"repeated":  `{"verdict": "comment", ` + bound + `, "verdict": "approve"}`,
		"nested":    `{"verdict": "comment", ` + bound + `, "x": [{"a": 1, "A": 2}]}`,
	} {
		f := filepath.Join(w.root, strings.ReplaceAll(name, " ", "-")+".json")
		write(t, w.root, filepath.Base(f), doc)
		_, err := Review(ctx, re, f)
		var r *Refused
		if !errors.As(err, &r) || !strings.Contains(r.Reason, "write each key once") {
			t.Errorf("%s: err = %v, want a refusal saying how to fix it", name, err)
		}
	}
	if st := w.fake.Statuses(head); len(st) != 0 {
		t.Fatalf("statuses posted for refused verdicts: %+v", st)
	}
	write(t, w.root, "other-case.json", `{"VERDICT": "approve", `+bound+`}`)
	if _, err := Review(ctx, re, filepath.Join(w.root, "other-case.json")); err != nil {
		t.Fatal(err)
	}
	for _, st := range w.fake.Statuses(head) {
		if st.State == "success" {
			t.Fatalf("a verdict spelled VERDICT posted success: %+v", st)
		}
	}
}

// TestReviewCapsTheVerdict: a verdict over the result cap is refused, not read without end.
func TestReviewCapsTheVerdict(t *testing.T) {
	w, _, re := proposed(t)
	write(t, w.root, "big.json", `{"verdict": "approve", "summary": "`+strings.Repeat("a", maxResultFile)+`"}`)
	_, err := Review(context.Background(), re, filepath.Join(w.root, "big.json"))
	var r *Refused
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "over") {
		t.Fatalf("err = %v, want a refusal of the size", err)
	}
}

// proposed is a world with pull request #2 proposed by develop, its head, and the environment of
// a review job on it.
func proposed(t *testing.T) (*world, string, *Env) {
	t.Helper()
	w := newWorld(t)
	p, err := Propose(context.Background(), w.env("develop"), w.agentBundle(map[string]string{"src/a.go": "package x\n"}))
	if err != nil {
		t.Fatal(err)
	}
	re := w.env("reviewer")
	re.Subject = "2"
	return w, w.branch(p.Branch), re
}
