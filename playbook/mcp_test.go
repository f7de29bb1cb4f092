package playbook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

func TestProfileMCPServers(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "flows"), 0o755)
	os.WriteFile(filepath.Join(dir, "flows", "triage.yml"), []byte("name: triage\nsteps:\n  - id: find\n    command: mcp search query q=bugs\n  - id: other\n    command: mcp tracker list\n"), 0o644)
	yml := `schema: autonomy.ir.v1
targets: [fake]
actors:
  x:
    behavior: flows/triage.yml
    triggers: [{ dispatch: true }]
policy:
  box:
    mcp:
      servers:
        search: { command: [search-mcp, --key, sk-abcdefghijklmnopqrstuvwxyz], env: [SEARCH_TOKEN] }
`
	os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(yml), 0o644)
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	_, diags = Profile(p)
	got := diags.String()
	for _, want := range []string{
		`ir.yml:11:48: policy.box.mcp.servers.search.command holds what looks like a secret literal (an API key (sk-…)) (pass it in the server's environment: list the variable in policy.box.mcp.servers.search.env)`,
		`flows/triage.yml:6:14: step "other": the MCP server "tracker" is not declared (declare it in policy.box.mcp.servers.tracker: { command: [ARGV…] } (or give it with --mcp-servers); declared: search)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if strings.Contains(got, "abcdefghij") {
		t.Errorf("a diagnostic echoes the secret:\n%s", got)
	}
	if strings.Count(strings.TrimSpace(got), "\n") != 1 {
		t.Errorf("want exactly two diagnostics:\n%s", got)
	}
}
