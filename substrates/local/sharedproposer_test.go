package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// An agent holding code:propose in the shared workspace commits on the installation root's
// checked-out branch when launched without --branch: compile warns at the capability, naming the
// reviewer that never sees its work; in an isolated workspace, or without code:propose, nothing.
func TestASharedProposerIsWarned(t *testing.T) {
	for _, c := range []struct{ name, actor, want string }{
		{"shared, reviewed", "    capabilities: [code:propose]\n    review: rev\n",
			`ir.yml:6:20: warning: actor "dev" holds code:propose in the shared workspace: launched without --branch, it commits on the branch the installation root has checked out, with no proposal, and "rev" never reviews it`},
		{"shared, scoped", "    capabilities: [tasks:converse, code:propose@docs]\n",
			`ir.yml:6:36: warning: actor "dev" holds code:propose in the shared workspace: launched without --branch, it commits on the branch the installation root has checked out, with no proposal (give it execution: { workspace: isolated }`},
		{"explicitly shared", "    capabilities: [code:propose]\n    execution: { workspace: shared }\n", `holds code:propose in the shared workspace`},
		{"isolated", "    capabilities: [code:propose]\n    review: rev\n    execution: { workspace: isolated }\n", ""},
		{"isolated, no reviewer", "    capabilities: [code:propose]\n    execution: { workspace: isolated }\n",
			`ir.yml:6:20: warning: actor "dev" holds code:propose and names no reviewer: the code flow refuses every proposal it makes, so none merges (name its reviewer with review: ACTOR`},
		{"no code:propose", "    capabilities: [tasks:converse]\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			yml := "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  dev:\n    behavior: run.sh\n" + c.actor +
				"    triggers: [{ cron: \"0 7 * * 1\" }]\n  rev:\n    behavior: run.sh\n    capabilities: [code:review]\n    triggers: [{ dispatch: true }]\n"
			for name, data := range map[string]string{"ir.yml": yml, "run.sh": "#!/bin/sh\n"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p, diags, err := ir.Check(dir)
			if err != nil || diags.HasErrors() {
				t.Fatalf("%v\n%s", err, diags)
			}
			out, err := Substrate{}.Compile(resolve(p))
			if err != nil {
				t.Fatal(err)
			}
			got := out.Warnings.String()
			if c.want == "" && (strings.Contains(got, "code:propose in the shared workspace") || strings.Contains(got, "names no reviewer")) || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("warnings:\n%s\nwant %q", got, c.want)
			}
		})
	}
}
