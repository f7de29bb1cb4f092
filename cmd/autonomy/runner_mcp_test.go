//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/mcptest"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerWorkflowMCP: a workflow playbook actor whose mcp step calls a server declared in
// policy.box.mcp.servers (a real stdio MCP server process: this test binary) runs under the
// local runner; the tool's structured content flows to a cli step by $greet.json.
func TestRunnerWorkflowMCP(t *testing.T) {
	yml := `schema: autonomy.ir.v1
targets: [local]
actors:
  greeter:
    behavior: flows/greet.yml
    triggers: [{ dispatch: true, params: { WHO: subject.ref } }]
policy:
  box:
    mcp:
      servers:
        tools: { command: [` + autonomyBin(t) + `, ` + mcptest.Flag + `], timeoutMs: 20000 }
`
	flow := `name: greet
args:
  WHO: { default: nobody }
steps:
  - id: greet
    command: mcp tools greet name=$args.WHO
    output: json
  - id: save
    command: cli sh -c 'printf "%s" "$0" > greeting' $greet.json.greeting
`
	dir := runnerFleet(t, yml, map[string]string{"flows/greet.yml": flow})
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "greeter", "--ref", "ada")
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.Fields(out)[0]
	s := waitParked(t, st, id)
	got, _ := os.ReadFile(filepath.Join(dir, "greeting"))
	if s.Status != ir.Done || string(got) != "hello ada" {
		log, _ := os.ReadFile(s.LogPath)
		t.Fatalf("session %s: %s (%s), greeting %q\n%s", id, s.Status, s.Reason, got, log)
	}
	if err := st.Check(context.Background()); err != nil {
		t.Error(err)
	}
}
