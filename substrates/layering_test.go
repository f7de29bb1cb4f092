package substrates

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/autonomyhq/autonomy"

// commandLine are the packages under substrates/ that sit above playbook like cmd/autonomy
// does: the command packages a substrate contributes to the CLI (ghcmd, localcmd: gh resume,
// runner approve and the like drive the playbook runtimes), and the registry, which lists them.
func commandLine(pkg string) bool {
	return strings.HasSuffix(pkg, "cmd") || pkg == module+"/substrates/registry"
}

// TestSubstratesImportNoPlaybook keeps the arrows pointing down (substrates/* → playbook → ir is
// the order; a substrate learns what a behavior is from the resolved profile, not by climbing
// back up): no package under substrates/ depends on a playbook package, directly or through
// another package, but the command lines above. Compile reads the resolved model (ir/resolved);
// the local runner hosts the playbook runtimes through local.PlaybookHost, which its command
// package injects, and shares only internal/playproto's protocol with them.
func TestSubstratesImportNoPlaybook(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Deps \" \"}}", module+"/substrates/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	isPlaybook := func(p string) bool { return p == module+"/playbook" || strings.HasPrefix(p, module+"/playbook/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 2 {
			t.Fatalf("go list printed %q", line)
		}
		pkg, deps := fields[0], strings.Fields(fields[1])
		if commandLine(pkg) {
			continue
		}
		var through []string
		for _, d := range deps {
			if isPlaybook(d) {
				through = append(through, d)
			}
		}
		if len(through) > 0 {
			t.Errorf("%s depends on %v: a substrate reads the resolved profile (ir/resolved), never playbook", pkg, through)
		}
	}
}
