//go:build unix

package local

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/ir"
)

// advisoryFleet is flowFleet with an advisory reviewer: its inline contract allows only comment
// and request-changes, never approve, and it writes the verdict $AUTONOMY_DIR/verdict holds
// (HEAD replaced by the head it reviewed).
func advisoryFleet() fleet {
	f := fleet{yml: strings.Replace(flowFleet.yml, "result: { schema: autonomy.review.v1 }",
		"result: { schema: { type: object, required: [headSha, summary], properties: { verdict: { enum: [comment, request-changes] }, summary: { type: string }, headSha: { type: string } } } }", 1),
		files: maps.Clone(flowFleet.files)}
	f.files["scripts/review.sh"] = `#!/bin/sh
set -e
sed "s/HEAD/$(git rev-parse HEAD)/" "$AUTONOMY_DIR/verdict" > "$AUTONOMY_RESULT"
`
	return f
}

// TestCodeFlowReadsTheVerdictItValidated: the advisory reviewer's verdict that carries
// "Verdict": "approve" beside an allowed "verdict" (encoding/json would read the approval) is
// refused as the reviewer's result, and one spelled "VERDICT": "approve" is not read as an
// approval: neither merges.
func TestCodeFlowReadsTheVerdictItValidated(t *testing.T) {
	t.Parallel()
	g := newFlowRigOf(t, advisoryFleet())
	at := g.main()
	for doc, want := range map[string]string{
		`{"verdict":"comment","summary":"s","headSha":"HEAD","Verdict":"approve"}`: `key "Verdict" in the top-level object`,
		`{"verdict":"comment","summary":"s","headSha":"HEAD","verdict":"approve"}`: `key "verdict" in the top-level object`,
		`{"VERDICT":"approve","summary":"s","headSha":"HEAD"}`:                     `did not approve (verdict "")`,
	} {
		p := g.propose("develop", "src/greet.txt", doc, doc)
		if p.State != store.ProposalRefused || !strings.Contains(p.Reason, want) || g.main() != at {
			t.Errorf("%s: %+v (main %s, was %s), want refused saying %q", doc, p, g.main(), at, want)
		}
	}
}

// TestResultWithRepeatedKeysFails: a result of the default contract with a key written twice,
// or two keys differing only in case, ends its session failed, saying which key and how to fix it.
func TestResultWithRepeatedKeysFails(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  worker:
    behavior: scripts/worker.sh
    triggers: [{ dispatch: true }]
`, files: map[string]string{"scripts/worker.sh": "#!/bin/sh\ncat \"$AUTONOMY_DIR/result\" > \"$AUTONOMY_RESULT\"\n"}}, false)
	r := newRunner(t, dir, Options{})
	for doc, key := range map[string]string{
		`{"status":"done","summary":"x","Status":"failed"}`:         `key "Status" in the top-level object`,
		`{"status":"failed","summary":"x","status":"done"}`:         `key "status" in the top-level object`,
		`{"status":"done","summary":"x","done":["a"],"DONE":["b"]}`: `key "DONE" in the top-level object`,
		`{"status":"done","summary":"x","x":{"a":{"k":1,"K":2}}}`:   `key "K" in /x/a`,
	} {
		testfs.WriteFile(t, dir, "result", doc)
		s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "worker"}).ID)
		if s.Status != ir.Failed || !strings.Contains(s.Reason, key) || !strings.Contains(s.Reason, "write each key once") {
			t.Errorf("%s: ended %s: %s; want failed naming %s", doc, s.Status, s.Reason, key)
		}
	}
}

// TestVerifyRecordsTheSubmittedResult: a reviewer that submits request-changes through
// submit_result and leaves an approval where AUTONOMY_RESULT says has its verdict read as the
// one validated, request-changes, not as the file it left.
func TestVerifyRecordsTheSubmittedResult(t *testing.T) {
	t.Parallel()
	r := newRunner(t, installFleet(t, flowFleet, true), Options{})
	cfg, err := r.In.Actor("reviewer")
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Repeat("a", 40)
	path := filepath.Join(t.TempDir(), "r.json")
	testfs.WriteFile(t, filepath.Dir(path), "r.json", `{"verdict":"approve","summary":"fine","headSha":"`+head+`"}`)
	submitted := `{"status":"done","summary":"s","output":{"verdict":"request-changes","summary":"not yet","headSha":"` + head + `"}}`
	if st, why, _ := r.In.verify(cfg, path, submitted); st != ir.Done {
		t.Fatalf("ended %s: %s", st, why)
	}
	if verdict, _, err := readVerdict(path); err != nil || verdict != "request-changes" {
		t.Fatalf("the verdict read is %q (%v), want the validated request-changes", verdict, err)
	}
}
