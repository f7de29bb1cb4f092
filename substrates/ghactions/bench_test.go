package ghactions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// fleet writes a synthetic profile of n actors shaped like a real fleet: proposers with their
// reviewers, orchestrators on cron, event-driven workers with every param source, and a human
// for every ten actors; behaviors are shared by role, as in real profiles.
func fleet(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	var b strings.Builder
	b.WriteString("schema: autonomy.ir.v1\ntargets: [gh-actions]\ncodeHost: github\nactors:\n")
	for i := 0; i < n; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&b, "  pm-%d:\n    behavior: skills/pm\n    capabilities: [agent:launch, agent:list, tasks:author, tasks:converse]\n    triggers: [{ cron: \"%d */2 * * 1-5\" }]\n    timeout: 15\n", i, i%60)
		case 1, 2, 3:
			fmt.Fprintf(&b, "  dev-%d:\n    behavior: skills/dev\n    capabilities: [code:propose, tasks:converse]\n    triggers: [{ dispatch: true, params: { ISSUE: subject.ref, WHY: trigger.kind } }]\n    review: rev-%d\n    execution: { workspace: isolated }\n    timeout: 60\n", i, i-i%10+4)
		case 4:
			fmt.Fprintf(&b, "  rev-%d:\n    behavior: skills/rev\n    capabilities: [code:review, tasks:converse]\n    triggers:\n      - { dispatch: true, params: { PR: subject.ref } }\n      - event: pull_request_target\n        config: { types: [opened, synchronize] }\n        params: { PR: subject.ref, AUTHOR: subject.actor, ROLE: subject.actorRole, BODY: subject.text }\n    result: { schema: autonomy.review.v1 }\n    timeout: 20\n", i)
		case 9:
			fmt.Fprintf(&b, "  human-%d:\n    kind: human\n    behavior: humans/owner\n    capabilities: [tasks:converse]\n    triggers: [{ dispatch: true, params: { ITEM: subject.ref, ASK: subject.text } }]\n", i)
		default:
			fmt.Fprintf(&b, "  worker-%d:\n    behavior: skills/worker\n    capabilities: [tasks:author, tasks:converse]\n    triggers:\n      - event: issue_comment\n        config: { types: [created] }\n        params: { ISSUE: subject.ref, ROLE: subject.actorRole, BODY: subject.text, WHY: trigger.kind }\n      - event: issues\n        config: { types: [labeled] }\n        params: { ISSUE: subject.ref }\n    timeout: 30\n", i)
		}
	}
	b.WriteString("policy:\n  box:\n    taskStates: { input-required: needs-input }\n    gh-actions: { model: gpt-5-codex }\n    risk: { human_required_paths: [\".github/**\"] }\n")
	files := map[string]string{"ir.yml": b.String()}
	for _, s := range []string{"skills/pm", "skills/dev", "skills/rev", "skills/worker", "humans/owner"} {
		files[s+"/SKILL.md"] = "# " + s + "\n\nDo the work the trigger names.\n"
	}
	for name, content := range files {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func TestFleetCompiles(t *testing.T) {
	p, diags, err := ir.Check(fleet(t, 40))
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v\n%s", err, diags)
	}
	out, err := substrates.Compile(Substrate{}, resolve(p), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(out.Files); got < 40 {
		t.Fatalf("%d files for 40 actors", got)
	}
}

// BenchmarkCompile resolves and compiles synthetic fleets to gh-actions in memory (profile
// already loaded; headers stamped; behaviors read from disk). Targets: 10,000 actors under 0.5 s
// and 300 MiB, and the CPU per actor (cpu-ns/actor) flat within 15% from 1,000 to 20,000
// (compile is linear in actors).
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{10, 1000, 5000, 10000, 20000} {
		b.Run(fmt.Sprintf("actors=%d", n), func(b *testing.B) {
			p, diags, err := ir.Check(fleet(b, n))
			if err != nil || diags.HasErrors() {
				b.Fatalf("%v\n%s", err, diags)
			}
			dir := b.TempDir()
			b.ReportAllocs()
			cpu0, ops := processCPU(), 0
			for b.Loop() {
				// What the CLI does once per profile (resolve), then the compile.
				out, err := substrates.Compile(Substrate{}, resolve(p), dir)
				if err != nil || len(out.Files) < n {
					b.Fatal(err)
				}
				ops++
			}
			// CPU per op and per actor (user+sys, GC included): the figures a shared machine does
			// not inflate, and the one that shows compile is linear.
			cpu := float64(processCPU()-cpu0) / float64(ops)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(cpu/float64(n), "cpu-ns/actor")
		})
	}
}
