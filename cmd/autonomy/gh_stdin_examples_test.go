//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/tools"
)

// shellExample runs an example line with sh, as a person pastes it: its pipeline, its
// assignments, and autonomy (this test binary, TestMain) first on PATH. It returns the exit code
// and output; a run past a minute is killed and fails the test.
func shellExample(t *testing.T, line string) (int, string, string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(autonomyBin(t), filepath.Join(bin, "autonomy")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after a minute\n%s%s", line, out.String(), errOut.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// checkJobEnv fails the test for a variable the example sets that the step (jobEnv, jobEnvOf)
// does not, unless allowed (what GitHub's runner sets), or sets to another literal than the step.
func checkJobEnv(t *testing.T, line, what string, ex example, jobEnv map[string]string, allowed []string) {
	t.Helper()
	for _, kv := range ex.env {
		k, v, _ := strings.Cut(kv, "=")
		want, declared := jobEnv[k]
		switch {
		case !declared && !slices.Contains(allowed, k):
			t.Errorf("%s sets %s, which %s does not (it sets %v)", line, k, what, slices.Sorted(maps.Keys(jobEnv)))
		case declared && !strings.Contains(want, "${{") && want != v:
			t.Errorf("%s sets %s=%q; %s sets %q", line, k, v, what, want)
		}
	}
}

// mcpTools returns the tools a tools/list answer (id 2) in an MCP server's output lists.
func mcpTools(t *testing.T, line, out string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		var msg struct {
			ID     int
			Result struct{ Tools []struct{ Name string } }
		}
		if json.Unmarshal([]byte(l), &msg) == nil && msg.ID == 2 {
			var names []string
			for _, tl := range msg.Result.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			return names
		}
	}
	t.Fatalf("%s answered no tools/list:\n%s", line, out)
	return nil
}

// toolsOf returns the tools of the catalog that the capabilities give, sorted.
func toolsOf(caps []string) []string {
	var names []string
	for _, tl := range tools.Catalog {
		if tl.Capability == "" || slices.Contains(caps, tl.Capability) {
			names = append(names, tl.Name)
		}
	}
	slices.Sort(names)
	return names
}

// ghMCPExample runs the example of autonomy gh mcp as the agent CLI of the agent job starts it:
// in a checkout of the sdlc fleet compiled for gh-actions, with only variables the step running
// the agent sets (the step running autonomy gh jail, parsed from the compiled workflows) or
// GitHub's runner sets, against a simulated GitHub API. Its tools/list answer is the tools of
// the actor's installed capabilities (the manifest's), and it records nothing.
func ghMCPExample(t *testing.T, line string, ex example) {
	t.Helper()
	if code, _, errOut := run(t, "compile", "profiles/sdlc", "--target", "gh-actions", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	actor := ""
	for _, kv := range ex.env {
		if k, v, _ := strings.Cut(kv, "="); k == "AUTONOMY_ACTOR" {
			actor = v
		}
	}
	jobEnv := jobEnvOf(t, filepath.Join(".github", "workflows"), "jail", actor)
	checkJobEnv(t, line, "the step running the agent", ex, jobEnv, githubDefaults)
	for k, v := range jobEnv {
		if v != scriptSet {
			t.Setenv(k, "") // only what the example sets
		}
	}
	ghCodeHost(t)
	sha := gitIn(t, ".", "rev-parse", "HEAD")
	code, out, errOut := shellExample(t, strings.NewReplacer("GH_TOKEN=…", "GH_TOKEN=t", "GITHUB_SHA=…", "GITHUB_SHA="+sha).Replace(line))
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(".autonomy", "gh-actions", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Actors []struct {
			Name         string
			Capabilities []string
		}
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Actors, func(a struct {
		Name         string
		Capabilities []string
	}) bool {
		return a.Name == actor
	})
	if i < 0 {
		t.Fatalf("the manifest has no actor %q", actor)
	}
	if got, want := mcpTools(t, line, out), toolsOf(m.Actors[i].Capabilities); !slices.Equal(got, want) {
		t.Errorf("%s lists the tools %v; %s's capabilities %v give %v", line, got, actor, m.Actors[i].Capabilities, want)
	}
	if rec, err := os.ReadFile(flagOfEnv(ex, "AUTONOMY_OUTPUTS")); err != nil || len(rec) != 0 {
		t.Errorf("%s: the safe outputs %q (%v), want an empty file", line, rec, err)
	}
}

// flagOfEnv returns the value the example assigns to the variable k.
func flagOfEnv(ex example, k string) string {
	for _, kv := range ex.env {
		if key, v, _ := strings.Cut(kv, "="); key == k {
			return v
		}
	}
	return ""
}

// runnerMCPExample runs the example of autonomy runner mcp (line, its session replaced by one of
// actor in flight) in the installation ws: its tools/list answer is the tools of the actor's
// installed capabilities.
func runnerMCPExample(t *testing.T, ws, line, actor string) {
	t.Helper()
	code, out, errOut := shellExample(t, line)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(ws, ".autonomy", "local", "actors", actor+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Capabilities []string }
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if got, want := mcpTools(t, line, out), toolsOf(cfg.Capabilities); !slices.Equal(got, want) {
		t.Errorf("%s lists the tools %v; %s's capabilities %v give %v", line, got, actor, cfg.Capabilities, want)
	}
}

// ghJailExample runs the example of autonomy gh jail as the agent step runs it, after the model
// proxy the job's earlier step starts (autonomy gh model-proxy, here with an upstream of the
// test's): with only variables that step sets (parsed from the compiled sdlc workflows), the
// proxy put in $GITHUB_ENV (its URL stands in for the example's), or GitHub's runner sets. The
// command inside sees no GITHUB_ENV (which the runner sets for the step) and cannot write
// RUNNER_TEMP.
func ghJailExample(t *testing.T, line string, ex example) {
	t.Helper()
	if code, _, errOut := run(t, "compile", "profiles/sdlc", "--target", "gh-actions", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	jobEnv := jobEnvOf(t, filepath.Join(".github", "workflows"), "jail", "")
	for k, v := range jobEnv {
		if v != scriptSet {
			t.Setenv(k, "") // only what the example sets
		}
	}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the test's upstream answers nothing", http.StatusTeapot)
	}))
	t.Cleanup(upstream.Close)
	ws := mustGetwd(t)
	githubEnv := filepath.Join(ws, "job", "env") // as the runner sets it, for every step
	writeIn(t, "job", "env", "")
	for k, v := range map[string]string{"RUNNER_TEMP": "job", "GITHUB_ENV": githubEnv, "OPENAI_API_KEY": "sk-test",
		"AUTONOMY_CREDENTIAL_ENV": "OPENAI_API_KEY", "AUTONOMY_MODEL_API": "openai", "AUTONOMY_MODEL_URL": upstream.URL + "/v1"} {
		t.Setenv(k, v)
	}
	if code, out, errOut := run(t, "gh", "model-proxy"); code != 0 {
		t.Fatalf("setup model-proxy: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() {
		t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(ws, "job", "summary.md"))
		if code, out, errOut := run(t, "gh", "model-usage"); code != 0 { // stops the proxy
			t.Errorf("model-usage: exit %d\n%s%s", code, out, errOut)
		}
	})
	exported := map[string]string{}
	data, err := os.ReadFile(githubEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		exported[k] = v
	}
	t.Setenv("AUTONOMY_MODEL_URL", "")
	allowed := append(slices.Clone(githubDefaults), "RUNNER_TEMP")
	for i, kv := range ex.env {
		k, _, _ := strings.Cut(kv, "=")
		if v, ok := exported[k]; ok {
			allowed = append(allowed, k)
			ex.env[i] = k + "=" + v // the proxy's, for the example's
		}
	}
	checkJobEnv(t, line, "the step running the agent", ex, jobEnv, allowed)
	code, out, errOut := runExample(t, line, ex)
	if code != 0 || !strings.Contains(out, "GITHUB_ENV=unset") || !strings.Contains(out, "RUNNER_TEMP is read-only") {
		t.Errorf("%s: exit %d\n%s%s", line, code, out, errOut)
	}
	if log, _ := os.ReadFile(filepath.Join("job", "autonomy-model", "egress.jsonl")); strings.Contains(string(log), "forged") {
		t.Errorf("%s: the command wrote the egress log: %s", line, log)
	}
}
