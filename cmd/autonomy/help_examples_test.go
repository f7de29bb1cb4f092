//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// helpExamples returns every example line of every command's --help, each once, with the
// commands showing it.
func helpExamples(t *testing.T) map[string][]string {
	t.Helper()
	lines := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range strings.Split(c.Example, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines[l] = append(lines[l], c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(nil, io.Discard, io.Discard))
	if len(lines) < 25 {
		t.Fatalf("only %d examples", len(lines))
	}
	return lines
}

// example is one example line, parsed as a shell would: env assignments, words (double and
// single quotes group), and a > redirect of stdout.
type example struct {
	env      []string
	args     []string // without the leading "autonomy"
	redirect string
	piped    bool // printf … | autonomy …: the example feeds autonomy's stdin (shellExample)
}

func parseExample(t *testing.T, line string) example {
	t.Helper()
	var words []string
	var cur strings.Builder
	inQuote, inSingle, have := false, false, false
	for _, r := range line {
		switch {
		case r == '\'' && !inQuote:
			inSingle, have = !inSingle, true
		case inSingle:
			cur.WriteRune(r)
		case r == '"':
			inQuote, have = !inQuote, true
		case r == ' ' && !inQuote:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	var ex example
	if i := slices.Index(words, "|"); i >= 0 && len(words) > 0 && words[0] == "printf" {
		ex.piped, words = true, words[i+1:] // printf's lines on autonomy's stdin: run by a shell
	} else if i >= 0 {
		words = words[:i] // a pipeline: autonomy's part is what is run
	}
	for len(words) > 0 && strings.Contains(words[0], "=") && words[0] != "autonomy" {
		ex.env = append(ex.env, words[0])
		words = words[1:]
	}
	if len(words) == 0 || words[0] != "autonomy" {
		t.Fatalf("example %q does not run autonomy", line)
	}
	words = words[1:]
	if n := len(words); n >= 2 && words[n-2] == ">" {
		ex.redirect, words = words[n-1], words[:n-2]
	}
	ex.args = words
	return ex
}

// workspaceTemplate makes, under a directory of t, what each workspace starts as: a copy of the
// bundled profiles, a docs folder and a git repository with one commit (isolated sessions need
// one). It is made once per test and copied for each example, which is cheaper than a git init
// and commit each time.
func workspaceTemplate(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "work")
	for _, name := range []string{"hello", "hello-human", "sdlc", "librarian", "release-gate", "steps-triage"} {
		p := copyProfile(t, name)
		if err := os.MkdirAll(filepath.Join(ws, "profiles"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p, filepath.Join(ws, "profiles", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyTreeTo(t, "../../docs/examples", filepath.Join(ws, "docs", "examples")) // as in a clone
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "profiles"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws
}

// workspace makes a fresh directory holding a copy of template (workspaceTemplate), and moves
// into it.
func workspace(t *testing.T, template string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "work")
	copyTreeTo(t, template, ws)
	t.Chdir(ws)
	return ws
}

// runExample runs one parsed example in-process, with its env and redirect.
func runExample(t *testing.T, line string, ex example) (int, string, string) {
	t.Helper()
	for _, kv := range ex.env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var args []string
	for _, a := range ex.args {
		if strings.Contains(a, "*") { // the shell's glob
			matches, _ := filepath.Glob(a)
			args = append(args, matches...)
			continue
		}
		args = append(args, a)
	}
	code, out, errOut := run(t, args...)
	if ex.redirect != "" {
		if err := os.WriteFile(ex.redirect, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return code, out, errOut
}

// TestHelpExamplesWork runs every example of every command's --help against the bundled
// profiles: each exits 0. A command's preconditions are set up first (check compares with what
// compile installed; runner verbs act on sessions that exist: 7-k3qa, 8-k3qa and atk_… stand for
// real ids and tokens; the gh-actions conformance runs against a simulated GitHub API).
func TestHelpExamplesWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance battery and the runner")
	}
	all := helpExamples(t)
	template := workspaceTemplate(t)
	ran := map[string]bool{}
	var runnerLines []string
	proxyLines := map[string]string{} // the model proxy's start and stop, run as one job
	for line := range all {
		ex := parseExample(t, line)
		if len(ex.args) > 0 && ex.args[0] == "runner" {
			runnerLines = append(runnerLines, line)
			continue
		}
		if len(ex.args) > 1 && ex.args[0] == "gh" && (ex.args[1] == "model-proxy" || ex.args[1] == "model-usage") {
			proxyLines[ex.args[1]] = line
			continue
		}
		t.Run(line, func(t *testing.T) {
			ws := workspace(t, template)
			if ex.args[0] == "check" {
				// check compares with an install: make it first, as compile would.
				target, dir := flagValue(ex.args, "--target"), flagValue(ex.args, "--dir")
				if dir == "" {
					dir = "."
				}
				if _, err := os.Stat(ex.args[1]); err != nil {
					copyTreeTo(t, "profiles/sdlc", ex.args[1]) // a profile kept in the repository
				}
				if code, _, errOut := run(t, "compile", ex.args[1], "--target", target, "--out", dir); code != 0 {
					t.Fatalf("setup compile: exit %d\n%s", code, errOut)
				}
			}
			if len(ex.args) > 1 && ex.args[0] == "playbook" && (ex.args[1] == "weave" || ex.args[1] == "trial") {
				// weave reads an installation's overlay package: install the fleet that has one.
				if code, _, errOut := run(t, "compile", "profiles/librarian", "--target", "local", "--out", "."); code != 0 {
					t.Fatalf("setup compile: exit %d\n%s", code, errOut)
				}
				t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(t.TempDir(), "summary.md"))
			}
			if len(ex.args) > 1 && ex.args[0] == "playbook" && ex.args[1] == "step" {
				playbookStepExample(t, line, ex) // gh_examples_test.go
				return
			}
			if ex.args[0] == "gh" {
				ghExample(t, line, ex) // gh_examples_test.go
				return
			}
			if ex.args[0] == "dev" {
				devModelExample(t, ex)
				return
			}
			if ex.args[0] == "compile" && slices.Contains(ex.args, "--watch") {
				watchExample(t, ws, ex)
				return
			}
			if ex.args[0] == "doctor" {
				doctorReady(t, ex)
			}
			if ex.args[0] == "kubernetes" {
				kubePruneReady(t, ex) // kubernetes_test.go
			}
			if ex.args[0] == "provision" {
				provisionFake(t, flagValue(ex.args, "--repo")) // on a simulated GitHub API, the token in GH_TOKEN
			}
			if len(ex.args) > 1 && ex.args[0] == "playbook" && (ex.args[1] == "run" || ex.args[1] == "resume") {
				playbookRunReady(t, &ex)
			}
			if len(ex.args) > 2 && ex.args[0] == "playbook" && ex.args[1] == "promote" {
				promoteReady(t, ex)
			}
			if ex.args[0] == "conformance" && strings.Contains(line, "--repo") {
				fakeGitHubFor(t, ex)
			}
			if code, out, errOut := runExample(t, line, ex); code != 0 {
				t.Errorf("%s (in --help of %v): exit %d\n%s%s", line, all[line], code, out, errOut)
			}
		})
		ran[line] = true
	}
	t.Run("model proxy", func(t *testing.T) {
		modelProxyExamples(t, template, proxyLines) // gh_examples_test.go
		for _, l := range proxyLines {
			ran[l] = true
		}
	})
	t.Run("runner", func(t *testing.T) {
		runnerExamples(t, template, runnerLines, all)
		for _, l := range runnerLines {
			ran[l] = true
		}
	})
	for line := range all {
		if !ran[line] {
			t.Errorf("example %q was not run", line)
		}
	}
}

// doctorReady makes what doctor checks ready: an installation of the sdlc fleet where the example
// looks, the default preset's CLI at its pinned version (a stand-in that prints it), git, the
// sandbox helper, and the credential.
func doctorReady(t *testing.T, ex example) {
	t.Helper()
	dir := "."
	if len(ex.args) > 1 && !strings.HasPrefix(ex.args[1], "-") {
		dir = ex.args[1]
	}
	if code, _, errOut := run(t, "compile", "profiles/sdlc", "--target", "local", "--out", dir); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	bin := t.TempDir()
	// The network sandbox's programs too: PATH is bin and git's directory, which holds them or
	// not depending on the machine.
	for name, script := range map[string]string{"codex": "#!/bin/sh\necho codex-cli 0.169.0\n", "bwrap": "#!/bin/sh\n", "socat": "#!/bin/sh\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+filepath.Dir(git))
	t.Setenv("OPENAI_API_KEY", "test-key")
	// A git that knows who commits, as the operator's does (doctor checks the identity the
	// fleet's sessions commit as: their home's configuration).
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Ada\n\temail = ada@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
}

// runnerExamples runs the runner's examples as one story in one installation: the launches,
// then list, a pause, logs -f of a session that ends, the asks resolved with their tokens, and
// serve until SIGTERM. Agents wait for a gate file, so they are running when paused.
func runnerExamples(t *testing.T, template string, lines []string, all map[string][]string) {
	ws := workspace(t, template)
	gate := filepath.Join(t.TempDir(), "gate")
	// The gate's path is in the command itself: a session's environment is an allowlist.
	agentCmd, _ := json.Marshal([]string{"sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done; echo finished", gate})
	t.Setenv("AUTONOMY_LOCAL_AGENT", string(agentCmd))
	t.Setenv("AUTONOMY_DIR", "")
	if code, _, errOut := run(t, "compile", "profiles/sdlc", "--target", "local", "--out", "."); code != 0 {
		t.Fatalf("setup compile: exit %d\n%s", code, errOut)
	}
	verb := func(ex example) string {
		for i, a := range ex.args {
			if a == "--dir" {
				return ex.args[i+2]
			}
		}
		return ex.args[1]
	}
	order := map[string]int{"launch": 0, "list": 1, "mcp": 1, "get": 2, "update": 3, "logs": 4, "cancel": 5, "tick": 6, "serve": 7}
	sort.Slice(lines, func(i, j int) bool {
		vi, vj := verb(parseExample(t, lines[i])), verb(parseExample(t, lines[j]))
		if order[vi] != order[vj] {
			return order[vi] < order[vj]
		}
		// A pause before the asks are resolved; otherwise by text.
		pi, pj := strings.Contains(lines[i], "paused"), strings.Contains(lines[j], "paused")
		if pi != pj {
			return pi
		}
		return lines[i] < lines[j]
	})
	var develop []string // agent sessions of develop, in launch order
	type ask struct{ id, token string }
	var asks, decides []ask
	// The human simulator's examples read testbed/humans.yml (docs/local.md).
	if err := os.MkdirAll(filepath.Join(ws, "testbed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "testbed", "humans.yml"), []byte("maintainer:\n  - { type: approve, choose: approve, after: 30m }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	launch := func(args ...string) (string, string) {
		code, out, errOut := run(t, append([]string{"runner", "launch"}, append(args, "--format", "json")...)...)
		if code != 0 {
			t.Fatalf("launch %v: exit %d\n%s", args, code, errOut)
		}
		var v struct {
			Session struct{ ID string }
			Token   string
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v.Session.ID, v.Token
	}
	opened := false
	for _, line := range lines {
		orig := line
		ex := parseExample(t, line)
		switch v := verb(ex); {
		case v == "launch":
			code, out, errOut := runExample(t, line, ex)
			if code != 0 {
				t.Errorf("%s: exit %d\n%s%s", line, code, out, errOut)
				continue
			}
			id := strings.Fields(out + " ")[0]
			var js struct {
				Session struct{ ID string }
				Token   string
			}
			if json.Unmarshal([]byte(out), &js) == nil {
				id = js.Session.ID
			}
			switch {
			case js.Token != "" && strings.Contains(line, "--type decide"):
				decides = append(decides, ask{id, js.Token})
			case js.Token != "":
				asks = append(asks, ask{id, js.Token})
			case strings.Contains(line, "launch develop"):
				develop = append(develop, id)
			}
			continue
		case v == "update" && strings.Contains(line, "--choice"):
			// A typed decision's answer: the decide ask the launch example opened.
			if len(decides) == 0 {
				id, token := launch("maintainer", "--type", "decide", "--option", "A", "--option", "B")
				decides = append(decides, ask{id, token})
			}
			line = strings.NewReplacer("8-k3qa", decides[0].id, "atk_…", decides[0].token).Replace(line)
			decides = decides[1:]
		case v == "update" && strings.Contains(line, "--status done"):
			if len(asks) == 0 {
				id, token := launch("maintainer", "--ref", "42") // each resolve needs its own ask
				asks = append(asks, ask{id, token})
			}
			a := asks[0]
			asks = asks[1:]
			line = strings.NewReplacer("8-k3qa", a.id, "atk_…", a.token).Replace(line)
		case v == "update" && strings.Contains(line, "paused"), v == "get", v == "cancel":
			// The paused session: still there to show, and cancelled last (it is the one
			// session left running).
			line = strings.Replace(line, "7-k3qa", develop[0], 1)
		case v == "logs":
			if !opened {
				if err := os.WriteFile(gate, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				opened = true
			}
			line = strings.Replace(line, "7-k3qa", develop[len(develop)-1], 1)
			if strings.Contains(line, "--transcript") {
				// Only a preset's session behind a model proxy has a transcript; the example's
				// agent is a shell loop: its transcript is put where the proxy would write it.
				transcriptFor(t, ws, develop[len(develop)-1])
			}
		case v == "serve":
			serveExample(t, ws, parseExample(t, line))
			continue
		case v == "mcp":
			// The server of a develop session in flight (gh_stdin_examples_test.go).
			runnerMCPExample(t, ws, strings.Replace(line, "7-k3qa", develop[0], 1), "develop")
			continue
		}
		if code, out, errOut := runExample(t, line, parseExample(t, line)); code != 0 {
			t.Errorf("%s (in --help of %v): exit %d\n%s%s", line, all[orig], code, out, errOut)
		}
	}
	// The paused session is the last one running: cancel it.
	if len(develop) > 0 {
		run(t, "runner", "cancel", develop[0])
	}
	settleSessions(t, ws)
}

// transcriptFor writes a one-line transcript for session id of the installation in ws.
func transcriptFor(t *testing.T, ws, id string) {
	t.Helper()
	dir := filepath.Join(ws, filepath.FromSlash(local.TranscriptDir))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(`{"seq":1,"api":"openai","path":"/openai/v1/responses"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveExample runs `autonomy runner serve` as its own process until it says it serves, then
// stops it with SIGTERM: it must exit 0.
func serveExample(t *testing.T, ws string, ex example) {
	t.Helper()
	untilSignal(t, ws, ex, "serving", syscall.SIGTERM)
}

// watchExample runs `autonomy compile --watch` as its own process until it has compiled once
// and says it watches, then stops it as its help says (Ctrl-C): it must exit 0.
func watchExample(t *testing.T, ws string, ex example) {
	t.Helper()
	if before := untilSignal(t, ws, ex, "autonomy: watching ", os.Interrupt); !strings.Contains(before, " created, ") {
		t.Errorf("compile --watch did not compile before watching:\n%s", before)
	}
}

// untilSignal runs ex as its own process in dir until a line of its stderr contains ready, sends
// it sig, and checks that it then exits 0. It returns the stderr lines before ready's.
func untilSignal(t *testing.T, dir string, ex example, ready string, sig os.Signal) string {
	t.Helper()
	cmd := exec.Command(autonomyBin(t), ex.args...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var before strings.Builder
	for sc.Scan() && !strings.Contains(sc.Text(), ready) {
		before.WriteString(sc.Text() + "\n")
	}
	if !strings.Contains(sc.Text(), ready) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("%v ended before saying %q:\n%s", ex.args, ready, before.String())
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%v exited with %v after %v", ex.args, err, sig)
	}
	return before.String()
}

// fakeGitHubFor serves the probe fleet's workflows from an in-process GitHub API for the
// repository the example names, and points the example's token and GITHUB_API_URL at it.
func fakeGitHubFor(t *testing.T, ex example) {
	t.Helper()
	owner, name, _ := strings.Cut(flagValue(ex.args, "--repo"), "/")
	_, out, err := conformance.CompileProbeFleet(ghactions.Substrate{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wfs, err := ghfake.WorkflowsFromOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ghfake.New(ghfake.Options{Owner: owner, Repo: name, Token: "t", Workflows: wfs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GH_TOKEN", "")
	for i, kv := range ex.env {
		if k, _, _ := strings.Cut(kv, "="); k == "GITHUB_TOKEN" {
			ex.env[i] = "GITHUB_TOKEN=t" // the example's … stands for a token
		}
	}
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// copyTreeTo copies a folder of regular files.
func copyTreeTo(t *testing.T, from, to string) { testfs.CopyTree(t, from, to) }

// promoteReady gives the promote example what it measures: an evaluation declared by the
// profile, and sessions recorded in the installation --dir names, woven with the overlay and
// without it, the former scoring better.
func promoteReady(t *testing.T, ex example) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(ex.args[2], "ir.yml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("    evolve:\n      evaluation: { metric: score, field: score, minSessions: 2, minImprovement: 0.1 }\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	recordSessions(t, flagValue(ex.args, "--dir"), ex.args[3], []bool{true, true, false, false}, []float64{0.9, 0.8, 0.5, 0.6}, nil)
}

// playbookRunReady gives the playbook run and resume examples what they name: the workflow
// docs/examples/inbox-triage.yml (the workspace has this repository's docs/examples), a database
// of paused runs of their own, and for resume a run paused
// with a real token in place of rt_….
func playbookRunReady(t *testing.T, ex *example) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if ex.args[1] != "resume" {
		return
	}
	code, out, errOut := run(t, "playbook", "run", "--pipeline", "cli echo hi | approve | cli true")
	var env struct{ RequiresApproval struct{ ResumeToken string } }
	if code != 0 || json.Unmarshal([]byte(out), &env) != nil || env.RequiresApproval.ResumeToken == "" {
		t.Fatalf("setup run: exit %d\n%s%s", code, out, errOut)
	}
	for i, a := range ex.args {
		if a == "rt_…" {
			ex.args[i] = env.RequiresApproval.ResumeToken
		}
	}
}
