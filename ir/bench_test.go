package ir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// syntheticProfile returns a valid profile of n actors, about 1 KB of YAML each, shaped like real
// ones: three trigger forms, params from every source, flow and block style, comments.
func syntheticProfile(n int) []byte {
	var b strings.Builder
	b.Grow(n * 1100)
	b.WriteString("schema: autonomy.ir.v1\ntargets: [gh-actions, local]\ncodeHost: github\nactors:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `  actor-%d:
    # This actor is one of many workers of a large synthetic fleet; the comment pads it to the size
    # of a real actor, whose profile usually explains in a few lines what it is for and who reads it.
    # It fires on a weekday schedule, on demand from the orchestrator, and on comments from members,
    # and forwards the work item, the initiator, the text and why it fired, like real workers do.
    behavior: skills/worker
    capabilities: [tasks:author, tasks:converse, agent:list]
    timeout: 30
    execution: { workspace: isolated }
    triggers:
      - cron: "%d 6 * * 1-5"
        params: { KIND: trigger.kind }
      - dispatch: true
        params: { ISSUE: subject.ref, WHO: subject.actor, TEXT: subject.text }
      - event: issue_comment
        config:
          types: [created, edited]
        params:
          ISSUE: subject.ref
          ROLE: subject.actorRole
          BODY: subject.text
          KIND: trigger.kind
`, i, i%60)
	}
	b.WriteString("policy:\n  maxConcurrent: 8\n  box:\n    taskStates: { open: open, ready: ready, done: done }\n")
	return []byte(b.String())
}

func writeSynthetic(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "skills", "worker"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "worker", "SKILL.md"), []byte("# worker\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ProfileFile), syntheticProfile(n), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func TestSyntheticProfileIsValid(t *testing.T) {
	p, diags, err := Check(writeSynthetic(t, 50))
	if err != nil || len(diags) != 0 || len(p.Actors) != 50 {
		t.Fatalf("synthetic profile: %v %v", diags, err)
	}
}

// BenchmarkLoadValidate measures Load+Validate of synthetic profiles, file read included.
// Targets: 10,000 actors (about 10 MB) under 500 ms and 200 MiB allocated.
func BenchmarkLoadValidate(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("actors=%d", n), func(b *testing.B) {
			dir := writeSynthetic(b, n)
			info, _ := os.Stat(filepath.Join(dir, ProfileFile))
			b.SetBytes(info.Size())
			b.ReportAllocs()
			for b.Loop() {
				p, diags, err := Check(dir)
				if err != nil || diags.HasErrors() || len(p.Actors) != n {
					b.Fatalf("%v %v", diags, err)
				}
			}
		})
	}
}
