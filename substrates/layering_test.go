package substrates

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/autonomyhq/autonomy"

// runtimeDebt are the playbook packages a substrate's runtime still imports directly: the local
// runner hosts the playbook runtimes in-process (it weaves overlays as a session starts and
// answers paused workflow and step playbook runs). Issue 23 (item 3) moves that seam; until
// then the list is exact, so a new import fails this test and so does one that is gone (shrink
// the list). Compile reads the resolved model (ir/resolved) and imports no playbook package.
var runtimeDebt = map[string][]string{
	module + "/substrates/local": {module + "/playbook", module + "/playbook/engine", module + "/playbook/overlay", module + "/playbook/stepsrun"},
}

// commandLine are the packages under substrates/ that sit above playbook like cmd/autonomy
// does: the command packages a substrate contributes to the CLI (ghcmd, localcmd: gh resume,
// runner approve and the like drive the playbook runtimes), and the registry, which lists them.
func commandLine(pkg string) bool {
	return strings.HasSuffix(pkg, "cmd") || pkg == module+"/substrates/registry"
}

// TestSubstratesImportNoPlaybook keeps the arrows pointing down (substrates/* → playbook → ir is
// the order; a substrate learns what a behavior is from the resolved profile, not by climbing
// back up): no package under substrates/ depends on a playbook package, directly or through
// another package, but the runtime debt above (and the registry, which imports every substrate,
// through it).
func TestSubstratesImportNoPlaybook(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", module+"/substrates/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	isPlaybook := func(p string) bool { return p == module+"/playbook" || strings.HasPrefix(p, module+"/playbook/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		pkg, imports, deps := fields[0], strings.Fields(fields[1]), strings.Fields(fields[2])
		if commandLine(pkg) {
			continue
		}
		direct := slices.DeleteFunc(slices.Clone(imports), func(p string) bool { return !isPlaybook(p) })
		if want, ok := runtimeDebt[pkg]; ok {
			if !slices.Equal(direct, want) {
				t.Errorf("%s imports %v of playbook; the known runtime debt is %v: remove an import, never add one (and shrink the list when one goes)", pkg, direct, want)
			}
			continue
		}
		var through []string
		for _, d := range deps {
			if isPlaybook(d) {
				through = append(through, d)
			}
		}
		if len(through) == 0 {
			continue
		}
		viaDebt := slices.ContainsFunc(imports, func(p string) bool { _, ok := runtimeDebt[p]; return ok })
		if len(direct) > 0 || !viaDebt {
			t.Errorf("%s depends on %v: a substrate reads the resolved profile (ir/resolved), never playbook", pkg, through)
		}
	}
}
