//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerWorkflowCLIPolicy: policy.box.cli reaches a workflow run under the local runner: a
// program the profile names in a step is refused at validate, positioned; one the step takes
// from an arg is refused when the step runs, and nothing of the step runs.
func TestRunnerWorkflowCLIPolicy(t *testing.T) {
	yml := `schema: autonomy.ir.v1
targets: [local]
actors:
  tooler:
    behavior: flows/tool.yml
    triggers: [{ dispatch: true, params: { TOOL: subject.ref } }]
  fetcher:
    behavior: flows/fetch.yml
    triggers: [{ dispatch: true, params: { URL: subject.ref } }]
policy:
  box:
    cli: { allow: [sh, touch], deny: [rm] }
    web: { allow: [127.0.0.1] }
`
	flow := "name: tool\nargs:\n  TOOL: { default: touch }\nsteps:\n  - id: run\n    command: cli $args.TOOL made\n"
	fetch := "name: fetch\nargs:\n  URL: {}\nsteps:\n  - id: get\n    command: web $args.URL\n"
	dir := runnerFleet(t, yml, map[string]string{"flows/tool.yml": flow, "flows/fetch.yml": fetch})
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for tool, want := range map[string]string{"touch": "", "rm": `the program "rm" is denied by policy.box.cli.deny`, "/usr/bin/env": `the program "env" is not in policy.box.cli.allow [sh, touch]`} {
		os.Remove(filepath.Join(dir, "made"))
		out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "tooler", "--ref", tool)
		if code != 0 {
			t.Fatalf("launch: %d %s", code, errOut)
		}
		s := waitParked(t, st, strings.Fields(out)[0])
		_, made := os.Stat(filepath.Join(dir, "made"))
		if want == "" && (s.Status != ir.Done || made != nil) || want != "" && (s.Status != ir.Failed || !strings.Contains(s.Reason, want)) {
			t.Errorf("%s: %s (%s), made: %v", tool, s.Status, s.Reason, made == nil)
		}
	}

	// policy.box.web reaches the run: a listed host is fetched, another refused.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("page")) }))
	defer srv.Close()
	for url, want := range map[string]string{srv.URL: "", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1): `the host "localhost" is not in policy.box.web.allow [127.0.0.1]`} {
		out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "fetcher", "--ref", url)
		if code != 0 {
			t.Fatalf("launch: %d %s", code, errOut)
		}
		s := waitParked(t, st, strings.Fields(out)[0])
		if want == "" && s.Status != ir.Done || want != "" && (s.Status != ir.Failed || !strings.Contains(s.Reason, want)) {
			t.Errorf("%s: %s (%s)", url, s.Status, s.Reason)
		}
	}

	// Written in the step: refused by validate, at the command.
	prof := t.TempDir()
	os.MkdirAll(filepath.Join(prof, "flows"), 0o755)
	os.WriteFile(filepath.Join(prof, "ir.yml"), []byte(yml), 0o644)
	os.WriteFile(filepath.Join(prof, "flows/fetch.yml"), []byte(fetch), 0o644)
	os.WriteFile(filepath.Join(prof, "flows/tool.yml"), []byte("name: tool\nsteps:\n  - id: run\n    command: cli rm -rf x\n    postcondition: cli curl x\n"), 0o644)
	vout, errOut, code := cli(t, nil, "validate", prof)
	errOut = vout + errOut
	for _, want := range []string{`tool.yml:4:14: step "run": the program "rm" is denied by policy.box.cli.deny (remove it from policy.box.cli.deny, or change the step)`,
		`tool.yml:5:20: step "run": postcondition: the program "curl" is not in policy.box.cli.allow [sh, touch]`} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("validate: exit %d, want %q in\n%s", code, want, errOut)
		}
	}
}
