//go:build unix

package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
)

// setup returns an engine over a real SQLite store and a workspace holding the workflow.
func setup(t testing.TB, wf string) (*Engine, string, string) {
	t.Helper()
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	st, err := store.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	file := filepath.Join(ws, "wf.yml")
	if err := os.WriteFile(file, []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Engine{Pauses: st}, ws, file
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

const gated = `name: gated
steps:
  - id: one
    command: cli sh -c 'echo one >> count; echo "[1,2]"'
    output: json
  - id: gate
    command: cli sh -c 'echo gate >> count'
    approval: required
    prompt: Apply?
  - id: three
    command: cli sh -c 'echo three >> count'
    condition: $gate.approved
`

func TestPauseApproveRunsEachStepOnce(t *testing.T) {
	e, ws, file := setup(t, gated)
	ctx := context.Background()
	env := e.Run(ctx, Request{Pipeline: file, Workspace: ws})
	if !env.OK || env.Status != StatusNeedsApproval || env.RequiresApproval == nil {
		t.Fatalf("run: %+v", env)
	}
	a := env.RequiresApproval
	if a.Prompt != "Apply?" || a.Preview != "[1,2]\n" || len(a.Items) != 2 || !strings.HasPrefix(a.ResumeToken, "rt_") {
		t.Errorf("approval request: %+v", a)
	}
	if got := lines(t, filepath.Join(ws, "count")); strings.Join(got, ",") != "one" {
		t.Fatalf("before resume the side effects are %v", got)
	}
	env = e.Resume(ctx, a.ResumeToken, true)
	if !env.OK || env.Status != StatusOK || len(env.Output) != 3 || !env.Output[1].Approved {
		t.Fatalf("resume: %+v", env)
	}
	if got := lines(t, filepath.Join(ws, "count")); strings.Join(got, ",") != "one,gate,three" {
		t.Errorf("after resume the side effects are %v, want one,gate,three (step one not repeated)", got)
	}
	for _, tok := range []string{a.ResumeToken, "rt_wrong", ""} {
		env = e.Resume(ctx, tok, true)
		if env.OK || env.Error == nil || env.Error.Kind != "token" {
			t.Errorf("token %q: %+v, want refused", tok, env)
		}
	}
	if got := lines(t, filepath.Join(ws, "count")); len(got) != 3 {
		t.Errorf("a refused token ran something: %v", got)
	}
}

func TestDenyCancelsWithNoLaterSideEffect(t *testing.T) {
	e, ws, file := setup(t, gated)
	ctx := context.Background()
	env := e.Run(ctx, Request{Pipeline: file, Workspace: ws})
	tok := env.RequiresApproval.ResumeToken
	env = e.Resume(ctx, tok, false)
	if !env.OK || env.Status != StatusCancelled {
		t.Fatalf("deny: %+v", env)
	}
	if got := lines(t, filepath.Join(ws, "count")); strings.Join(got, ",") != "one" {
		t.Errorf("after deny the side effects are %v, want one", got)
	}
	if env := e.Resume(ctx, tok, true); env.OK {
		t.Errorf("a denied run's token resumed it: %+v", env)
	}
}

func TestTokenRedeemedOnceUnderRace(t *testing.T) {
	e, ws, file := setup(t, gated)
	ctx := context.Background()
	tok := e.Run(ctx, Request{Pipeline: file, Workspace: ws}).RequiresApproval.ResumeToken
	var wg sync.WaitGroup
	oks := make([]bool, 4)
	for i := range oks {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			oks[i] = e.Resume(ctx, tok, true).OK
		}(i)
	}
	wg.Wait()
	n := 0
	for _, ok := range oks {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d resumes succeeded with one token, want 1", n)
	}
	if got := lines(t, filepath.Join(ws, "count")); strings.Join(got, ",") != "one,gate,three" {
		t.Errorf("side effects %v", got)
	}
}

func TestHostileCommandIsArgv(t *testing.T) {
	e, ws, file := setup(t, "name: h\nsteps:\n  - id: a\n    command: cli echo hi; touch pwned && touch pwned2 $(touch pwned3)\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if !env.OK || env.Output[0].Stdout != "hi; touch pwned && touch pwned2 $(touch pwned3)\n" {
		t.Fatalf("%+v", env)
	}
	for _, f := range []string{"pwned", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s appeared: the command went through a shell", f)
		}
	}
	// Substituted values stay one argument each.
	e, ws, file = setup(t, "name: h\nargs:\n  x: { default: 'a b; touch pwned' }\nsteps:\n  - id: a\n    command: cli printf '%s|' $args.x\n")
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if !env.OK || env.Output[0].Stdout != "a b; touch pwned|" {
		t.Errorf("%+v", env)
	}
}

func TestCwdConfined(t *testing.T) {
	e, ws, file := setup(t, "name: c\nsteps:\n  - id: a\n    command: cli pwd\n    cwd: out\n")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || env.Error.Step != "a" || !strings.Contains(env.Error.Message, "leaves the workspace") {
		t.Errorf("symlink out: %+v", env.Error)
	}
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, Cwd: "../.."})
	if env.OK || env.Error.Kind != "invalid" || !strings.Contains(env.Error.Message, "leaves the workspace") {
		t.Errorf("--cwd ../..: %+v", env.Error)
	}
	e, ws, file = setup(t, "name: c\nsteps:\n  - id: a\n    command: cli pwd\n    cwd: ../..\n")
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || env.Error.Kind != "invalid" || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), "wf.yml:5:10: step \"a\": cwd \"../..\" leaves the workspace") {
		t.Errorf("cwd: ../..: %+v", env.Error)
	}
}

func TestOutputCapped(t *testing.T) {
	e, ws, file := setup(t, "name: c\nsteps:\n  - id: big\n    command: cli head -c 10000000 /dev/zero\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MaxOutputBytes: 4096})
	if env.OK || env.Error.Step != "big" || !strings.Contains(env.Error.Message, "cap of 4096 bytes") {
		t.Fatalf("%+v", env.Error)
	}
	if r := env.Output[0]; len(r.Stdout) != 4096 || !r.Truncated {
		t.Errorf("recorded %d bytes, truncated %v", len(r.Stdout), r.Truncated)
	}
}

func TestTimeoutKillsGrandchild(t *testing.T) {
	e, ws, file := setup(t, "name: t\nsteps:\n  - id: slow\n    command: cli sh -c 'sleep 60 & echo $! > gc.pid; wait'\n    timeoutMs: 300\n")
	start := time.Now()
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || env.Error.Step != "slow" || !strings.Contains(env.Error.Message, "timed out") {
		t.Fatalf("%+v", env.Error)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "gc.pid"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("no grandchild pid: %q", b)
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the grandchild %d outlived the step's timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestJSONOutputRefusesText(t *testing.T) {
	for _, out := range []string{"not json", `{"a":1} {"b":2}`, `[1] trailing`} {
		e, ws, file := setup(t, "name: j\nsteps:\n  - id: parse\n    command: cli printf '"+out+"'\n    output: json\n")
		env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
		if env.OK || env.Error.Step != "parse" || !strings.Contains(env.Error.Message, `step "parse": declares output: json`) {
			t.Errorf("%q: %+v", out, env.Error)
		}
	}
}

func TestUnsupportedNamespacesRefused(t *testing.T) {
	e, ws, file := setup(t, "name: n\nsteps:\n  - id: a\n    command: web open https://x\n  - id: b\n    command: node call x\n  - id: c\n    command: mcp server tool\n  - id: d\n    command: cli touch ran\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	diags := strings.Join(env.Error.Diagnostics, "\n")
	for _, want := range []string{`wf.yml:4:14: step "a": web steps are off: no host is listed in policy.box.web.allow (list the hosts web steps may fetch from in policy.box.web.allow (--web-allow for playbook run), or use an http step)`, `wf.yml:6:19: step "b": node runs a script file (.js, .mjs, .cjs), not "call"`, `wf.yml:8:14: step "c": the MCP server "server" is not declared (declare it in policy.box.mcp.servers.server: { command: [ARGV…] } (or give it with --mcp-servers); no server is declared)`} {
		if !strings.Contains(diags, want) {
			t.Errorf("missing %q in\n%s", want, diags)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("a step ran although the workflow was refused")
	}
}

func TestSecretsByAllowedHandleNeverEchoed(t *testing.T) {
	wf := "name: s\nsteps:\n  - id: a\n    command: cli sh -c 'echo \"key=$K\"'\n    env:\n      K: $secrets.API_TOKEN\n  - id: b\n    command: cli cat\n    stdin: $a.stdout\n    approval: required\n"
	e, ws, file := setup(t, wf)
	e.Secret = func(name string) (string, bool) {
		return map[string]string{"API_TOKEN": "hunter2-value"}[name], name == "API_TOKEN"
	}
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if env.OK || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), "$secrets.API_TOKEN is not in the allowlist") {
		t.Fatalf("not allowed: %+v", env.Error)
	}
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, Secrets: []string{"API_TOKEN"}})
	b, _ := json.Marshal(env)
	if !env.OK || strings.Contains(string(b), "hunter2") || !strings.Contains(env.Output[0].Stdout, "key=[secret:API_TOKEN]") {
		t.Fatalf("the envelope: %s", b)
	}
	env = e.Resume(context.Background(), env.RequiresApproval.ResumeToken, true)
	b, _ = json.Marshal(env)
	if !env.OK || strings.Contains(string(b), "hunter2") {
		t.Errorf("after resume: %s", b)
	}
}

func TestConditionSkipsAndArgs(t *testing.T) {
	wf := "name: c\nargs:\n  mode: { default: quick }\nsteps:\n  - id: a\n    command: cli printf '{\"n\":0,\"mode\":\"%s\"}' $args.mode\n    output: json\n  - id: b\n    command: cli touch b\n    condition: $a.json.n\n  - id: c\n    command: cli touch c\n    condition: $a.json.mode == \"deep\"\n  - id: d\n    command: cli touch d\n    condition: $a.json.mode != \"deep\"\n"
	e, ws, file := setup(t, wf)
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	var st []string
	for _, r := range env.Output {
		st = append(st, r.ID+"="+r.Status)
	}
	if !env.OK || strings.Join(st, " ") != "a=ok b=skipped c=skipped d=ok" {
		t.Errorf("%v %+v", st, env.Error)
	}
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, ArgsJSON: `{"mode":"deep"}`})
	if env.Output[2].Status != "ok" || env.Output[3].Status != "skipped" {
		t.Errorf("with mode deep: %+v", env.Output)
	}
	if env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, ArgsJSON: `{"nope":1}`}); env.OK || !strings.Contains(env.Error.Message, "no arg nope") {
		t.Errorf("unknown arg: %+v", env.Error)
	}
}

func TestHTTPStep(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "no", http.StatusTeapot)
			return
		}
		w.Write([]byte(`{"got":"` + r.Header.Get("X-K") + `"}`))
	}))
	defer srv.Close()
	e, ws, file := setup(t, "name: h\nsteps:\n  - id: get\n    command: \"http GET "+srv.URL+"/x -H 'X-K: v1'\"\n    output: json\n  - id: bad\n    command: http GET "+srv.URL+"/fail\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws})
	if len(env.Output) != 2 {
		t.Fatalf("%+v", env.Error)
	}
	if env.OK || string(env.Output[0].JSON) != `{"got":"v1"}` || env.Error.Step != "bad" || !strings.Contains(env.Error.Message, "418") {
		t.Errorf("%+v %+v", env.Output, env.Error)
	}
}

func TestInlinePipeline(t *testing.T) {
	e, ws, _ := setup(t, "name: x\nsteps: []\n")
	env := e.Run(context.Background(), Request{Pipeline: `cli printf 'a\nb\n' | approve "Sort them?" | cli sort -r`, Workspace: ws})
	if env.Status != StatusNeedsApproval || env.RequiresApproval.Prompt != "Sort them?" {
		t.Fatalf("%+v", env)
	}
	env = e.Resume(context.Background(), env.RequiresApproval.ResumeToken, true)
	if !env.OK || env.Output[1].Stdout != "b\na\n" {
		t.Errorf("%+v", env)
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		`a b  c`:               "a|b|c",
		`'x y' "p \"q\" $r" z`: `x y|p "q" $r|z`,
		`a\ b;c`:               "a b;c",
		`echo hi; touch pwned`: "echo|hi;|touch|pwned",
	} {
		got, err := Words(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("Words(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `a\`} {
		if _, err := Words(bad); err == nil {
			t.Errorf("Words(%q): no error", bad)
		}
	}
	for bad, want := range map[string]string{
		"cli a || cli b":     "empty command",
		"cli a |":            "empty command",
		"cli \x80":           "not UTF-8",
		"cli a | approve":    "ends with approve",
		`cli a | approve "x`: "unterminated",
	} {
		if _, err := inline(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("inline(%q): %v, want %q", bad, err, want)
		}
	}
}

// TestLimitsOutOfRange: a negative or too large limit is refused before anything runs (a
// negative timeout used to fall back to the default, and let a step run 30 s).
func TestLimitsOutOfRange(t *testing.T) {
	e, ws, file := setup(t, "name: t\nsteps:\n  - id: a\n    command: cli sh -c 'echo ran > ran'\n")
	for _, req := range []Request{
		{TimeoutMs: -5}, {TimeoutMs: MaxTimeoutMs + 1}, {MaxOutputBytes: -5}, {MaxOutputBytes: MaxMaxOutputBytes + 1},
	} {
		req.Pipeline, req.Workspace = file, ws
		env := e.Run(context.Background(), req)
		if env.OK || env.Error == nil || env.Error.Kind != "invalid" || !strings.Contains(env.Error.Message, "must be from 1 to") {
			t.Errorf("%+v: %+v", req, env)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatalf("%+v: the step ran", req)
		}
	}
}

// exited waits (up to a deadline, a failure) until the process pid has exited.
func exited(t *testing.T, pid int) {
	t.Helper()
	start, err := proc.StartTime(pid)
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && proc.Alive(pid, start) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBackgroundChildDoesNotHoldTheStep: a cli step ends when its process exits, though a child
// it left in the background holds its stdout: the step is ok with its exit status and output,
// and the child is killed with the step's process group (it used to time the step out).
func TestBackgroundChildDoesNotHoldTheStep(t *testing.T) {
	e, ws, file := setup(t, "name: t\nsteps:\n  - id: a\n    command: cli sh -c 'sleep 301 & echo $!'\n  - id: b\n    command: cli sh -c 'sleep 301 & echo started; exit 3'\n")
	e.OutputDrain = 50 * time.Millisecond
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, TimeoutMs: 20000})
	if len(env.Output) != 2 {
		t.Fatalf("%+v", env)
	}
	a, b := env.Output[0], env.Output[1]
	if a.Status != "ok" || a.ExitCode == nil || *a.ExitCode != 0 {
		t.Fatalf("step a: %+v (error %+v)", a, env.Error)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(a.Stdout))
	if err != nil {
		t.Fatalf("step a's output %q", a.Stdout)
	}
	exited(t, pid)
	if b.Status != "failed" || b.ExitCode == nil || *b.ExitCode != 3 || b.Stdout != "started\n" || env.Error == nil || !strings.Contains(env.Error.Message, "exited with status 3") {
		t.Errorf("step b: %+v, error %+v", b, env.Error)
	}
}

// TestHTTPGrammarAtRunTime: what validate cannot see (an arg's value) is refused when the step
// runs, by the parser validate uses (workflow.ParseHTTP), with its message and fix.
func TestHTTPGrammarAtRunTime(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"m":"FROB","u":"https://example.com","h":"A: b"}`, `step "s": unknown http method "FROB" (use one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)`},
		{`{"m":"GET","u":"ftp://example.com","h":"A: b"}`, `step "s": the URL "ftp://example.com" is not http or https (write the URL in full, e.g. https://example.com/api)`},
		{`{"m":"GET","u":"https://example.com","h":"nocolon"}`, `step "s": the header "nocolon" is not Name: value (e.g. -H 'Accept: application/json')`},
	} {
		e, ws, file := setup(t, "name: h\nargs:\n  m: {}\n  u: {}\n  h: {}\nsteps:\n  - id: s\n    command: http $args.m $args.u -H $args.h\n")
		env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, ArgsJSON: c.args})
		if env.OK || env.Error == nil || env.Error.Message != c.want {
			t.Errorf("%s: got %+v\nwant %s", c.args, env.Error, c.want)
		}
	}
}
