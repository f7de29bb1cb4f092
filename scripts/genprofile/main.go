// Command genprofile writes a deterministic synthetic autonomy.ir.v1 profile of n actors, shaped
// like a real fleet (orchestrators on cron, proposers with their reviewers, event-driven workers
// with every param source, a human for every ten actors, behaviors shared by role), for the
// performance measurements of docs/performance.md:
//
//	go run ./scripts/genprofile -actors 5000 -targets gh-actions,local /tmp/p5k
//
// The same flags always write the same bytes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "genprofile:", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("genprofile", flag.ContinueOnError)
	fl.SetOutput(stderr)
	n := fl.Int("actors", 1000, "number of actors (at least 1)")
	targets := fl.String("targets", "gh-actions,local", "comma-separated targets the profile declares")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() != 1 || *n < 1 {
		return errors.New("usage: genprofile [-actors N] [-targets T1,T2] DIR (DIR must not exist yet)")
	}
	return write(fl.Arg(0), Profile(*n, strings.Split(*targets, ",")))
}

// write creates dir and the profile's files in it; it refuses a dir that exists.
func write(dir string, files map[string]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for name, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Profile returns the files of a profile of n actors declaring targets, by slash path.
func Profile(n int, targets []string) map[string]string {
	var b strings.Builder
	b.Grow(n * 400)
	fmt.Fprintf(&b, "schema: autonomy.ir.v1\ntargets: [%s]\ncodeHost: github\nactors:\n", strings.Join(targets, ", "))
	for i := 0; i < n; i++ {
		actor(&b, i)
	}
	b.WriteString("policy:\n  maxConcurrent: 8\n  box:\n    taskStates: { input-required: needs-input }\n    gh-actions: { model: gpt-5-codex }\n    risk: { human_required_paths: [\".github/**\"] }\n")
	files := map[string]string{"ir.yml": b.String()}
	for _, s := range []string{"skills/pm", "skills/dev", "skills/rev", "skills/worker", "humans/owner"} {
		files[s+"/SKILL.md"] = "# " + s + "\n\nDo the work the trigger names.\n"
	}
	return files
}

// actor writes actor i; its role is i%10.
func actor(b *strings.Builder, i int) {
	switch i % 10 {
	case 0:
		fmt.Fprintf(b, "  pm-%d:\n    behavior: skills/pm\n    capabilities: [agent:launch, agent:list, tasks:author, tasks:converse]\n    triggers: [{ cron: \"%d */2 * * 1-5\" }]\n    timeout: 15\n", i, i%60)
	case 1, 2, 3:
		fmt.Fprintf(b, "  dev-%d:\n    behavior: skills/dev\n    capabilities: [code:propose, tasks:converse]\n    triggers: [{ dispatch: true, params: { ISSUE: subject.ref, WHY: trigger.kind } }]\n    review: rev-%d\n    execution: { workspace: isolated }\n    timeout: 60\n", i, i-i%10+4)
	case 4:
		fmt.Fprintf(b, "  rev-%d:\n    behavior: skills/rev\n    capabilities: [code:review, tasks:converse]\n    triggers:\n      - { dispatch: true, params: { PR: subject.ref } }\n      - event: pull_request_target\n        config: { types: [opened, synchronize] }\n        params: { PR: subject.ref, AUTHOR: subject.actor, ROLE: subject.actorRole, BODY: subject.text }\n    result: { schema: autonomy.review.v1 }\n    timeout: 20\n", i)
	case 9:
		fmt.Fprintf(b, "  human-%d:\n    kind: human\n    behavior: humans/owner\n    capabilities: [tasks:converse]\n    triggers: [{ dispatch: true, params: { ITEM: subject.ref, ASK: subject.text } }]\n", i)
	default:
		fmt.Fprintf(b, "  worker-%d:\n    behavior: skills/worker\n    capabilities: [tasks:author, tasks:converse]\n    triggers:\n      - event: issue_comment\n        config: { types: [created] }\n        params: { ISSUE: subject.ref, ROLE: subject.actorRole, BODY: subject.text, WHY: trigger.kind }\n      - event: issues\n        config: { types: [labeled] }\n        params: { ISSUE: subject.ref }\n    timeout: 30\n", i)
	}
}
