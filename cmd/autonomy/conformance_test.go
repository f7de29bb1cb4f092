package main

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/conformance.md from autonomy conformance")

// TestConformanceDocMatches: docs/conformance.md is exactly what `autonomy conformance --format
// markdown` prints (regenerate with go test ./cmd/autonomy -run ConformanceDoc -update-docs, or
// make conformance, and review the diff).
func TestConformanceDocMatches(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "conformance", "--format", "markdown")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	const doc = "../../docs/conformance.md"
	if *updateDocs {
		if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Fatalf("docs/conformance.md is stale: run make conformance and review the diff\n--- autonomy conformance --format markdown\n%s", out)
	}
}

// TestConformanceJSON: on a clean clone, the local exec and human runners pass every core check,
// and the matrix covers both substrates, every declaration verified.
func TestConformanceJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := run(t, "conformance", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rep conformance.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	core := map[string]int{}
	for _, r := range rep.Results {
		if r.Tier == conformance.Core && r.Outcome == conformance.Pass {
			core[r.Target]++
		}
	}
	if core["local exec"] != 7 || core["local human"] != 6 {
		t.Errorf("core passes: %v, want 7 for the local exec runner (cron-fires is an agent's), 6 for the human one", core)
	}
	subs := map[string]int{}
	for _, c := range rep.Matrix {
		if c.Verified {
			subs[c.Substrate]++
		}
	}
	n := len(conformance.Features())
	if subs["gh-actions"] != n || subs["local"] != n {
		t.Errorf("verified cells per substrate: %v, want %d each", subs, n)
	}
	if rep.CoreFailed || rep.Unverified != 0 {
		t.Errorf("coreFailed %v, unverified %d", rep.CoreFailed, rep.Unverified)
	}
}

func TestConformanceUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"conformance", "--target", "nope"}, `unknown target "nope"`},
		{[]string{"conformance", "--substrate", "nope"}, `unknown target "nope"`}, // the older name, hidden
		{[]string{"conformance", "--format", "yaml"}, "yaml"},
		{[]string{"conformance", "--target", "local", "--repo", "o/r"}, "--repo probes a runner against a repository, which none of local has"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 with %q", c.args, code, errOut, c.want)
		}
	}
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "")
	if code, _, errOut := run(t, "conformance", "--repo", "o/r"); code != 2 || !strings.Contains(errOut, "GITHUB_TOKEN or GH_TOKEN") {
		t.Errorf("--repo without a token: exit %d, %q", code, errOut)
	}
}
