//go:build unix

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/mcptest"
	"github.com/autonomyhq/autonomy/internal/proc"
)

// serverFlag makes the test binary a stdio MCP server (see TestMain): a real process speaking
// the protocol through the same SDK, as a server a profile declares would.
const serverFlag = mcptest.Flag

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serverFlag {
		os.Exit(mcptest.Serve(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func testServers(t testing.TB) map[string]MCPServer {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]MCPServer{
		"tools": {Command: []string{exe, serverFlag}, Env: []string{"TOOLS_TOKEN"}},
		"dies":  {Command: []string{exe, serverFlag, "exit"}},
	}
}

// gone reports whether no process of group pgid remains (zombies excepted: init reaps them).
// gone reports that no process of group pgid runs: none at all, or only zombies, which the
// group's killer does not reap (an orphaned grandchild waits on PID 1, slow under load).
func gone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) || len(proc.Members(pgid)) == 0
}

func TestMCPToCLIDataFlow(t *testing.T) {
	e, ws, file := setup(t, `name: flow
steps:
  - id: greet
    command: mcp tools greet name=world
    output: json
  - id: use
    command: cli sh -c 'printf "%s|%s" "$1" "$2" > got' sh $greet.json.greeting $greet.stdout
  - id: again
    command: mcp tools measure $greet.json
`)
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	if !env.OK || env.Status != StatusOK {
		t.Fatalf("run: %+v %+v", env, env.Error)
	}
	if env.Output[0].Stdout != "hello world" || string(env.Output[0].JSON) != `{"greeting":"hello world","length":11}` {
		t.Errorf("greet: stdout %q json %s", env.Output[0].Stdout, env.Output[0].JSON)
	}
	got, err := os.ReadFile(filepath.Join(ws, "got"))
	if err != nil || string(got) != "hello world|hello world" {
		t.Errorf("the cli step read %q (%v)", got, err)
	}
	// $greet.json as one word is the next call's arguments object.
	if env.Output[2].Stdout != "11 chars: hello world" {
		t.Errorf("again: %q", env.Output[2].Stdout)
	}
}

func TestMCPMinimalEnvironmentAndCwd(t *testing.T) {
	e, ws, file := setup(t, "name: env\nsteps:\n  - id: env\n    command: mcp tools env\n    cwd: sub\n")
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.Env = []string{"PATH=" + os.Getenv("PATH"), "RUNNER_SECRET=s3cr3t-value", "TOOLS_TOKEN=tok-abcdef123456", "HOME=/root"}
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	if !env.OK {
		t.Fatalf("run: %+v", env.Error)
	}
	out := env.Output[0].Stdout
	if strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "RUNNER_SECRET") || strings.Contains(out, "HOME=") {
		t.Errorf("the server inherited the runner's environment:\n%s", out)
	}
	if !strings.Contains(out, "TOOLS_TOKEN=[secret:TOOLS_TOKEN]") || strings.Contains(out, "tok-abcdef123456") {
		t.Errorf("the listed variable is missing or echoed unredacted:\n%s", out)
	}
	if !strings.Contains(out, "cwd="+filepath.Join(ws, "sub")) {
		t.Errorf("the server did not run in the step's cwd:\n%s", out)
	}
}

func TestMCPFailuresNameStepAndFix(t *testing.T) {
	for _, c := range []struct{ name, cmd, want string }{
		{"tool error", "mcp tools fail", `step "s": the tool "fail" of the MCP server "tools" reported an error: the index is locked`},
		{"unknown tool", "mcp tools grete", `step "s": the MCP server "tools" has no tool "grete" (it has: env, fail, greet, hang, measure); fix the step's command`},
		{"exits early", "mcp dies anything", `step "s": the MCP server "dies" exited (exit status 3) before answering the initialization: test server: cannot open its database (check policy.box.mcp.servers.dies.command)`},
		// Validate cannot see what an arg holds: the runtime refuses it with the same parser.
		{"bad args", "mcp tools greet $args.pair\nargs:\n  pair: {default: name}", `step "s": argument "name" is not NAME=VALUE, NAME:=JSON or one JSON object (e.g. q=text, n:=3, or '{"q": "text"}')`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ws, file := setup(t, "name: f\nsteps:\n  - id: s\n    command: "+c.cmd+"\n")
			env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
			if env.OK || env.Error == nil || env.Error.Message != c.want {
				t.Fatalf("got %+v\nwant %s", env.Error, c.want)
			}
		})
	}
}

func TestMCPCapAndCwdConfined(t *testing.T) {
	e, ws, file := setup(t, "name: c\nsteps:\n  - id: s\n    command: mcp tools greet name=world\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t), MaxOutputBytes: 5})
	if env.OK || env.Error.Message != `step "s": its output passed the cap of 5 bytes (maxOutputBytes)` || env.Output[0].Stdout != "hello" || !env.Output[0].Truncated {
		t.Fatalf("cap: %+v %+v", env.Error, env.Output)
	}
	e, ws, file = setup(t, "name: c\nsteps:\n  - id: s\n    command: mcp tools hang\n    cwd: ../..\n")
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	if env.OK || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), `wf.yml:5:10: step "s": cwd "../.." leaves the workspace`) {
		t.Fatalf("cwd ../..: %+v", env.Error)
	}
	outside := t.TempDir()
	e, ws, file = setup(t, "name: c\nsteps:\n  - id: s\n    command: mcp tools hang\n    cwd: out\n")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	env = e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	if env.OK || !strings.Contains(env.Error.Message, `step "s": cwd: "out" leaves the workspace`) {
		t.Fatalf("cwd through a symlink out: %+v", env.Error)
	}
	if _, err := os.Stat(filepath.Join(outside, "hang.pids")); err == nil {
		t.Error("the server ran outside the workspace")
	}
}

func TestMCPTimeoutKillsServerGroup(t *testing.T) {
	e, ws, file := setup(t, "name: h\nsteps:\n  - id: s\n    command: mcp tools hang\n    timeoutMs: 1500\n")
	start := time.Now()
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	if env.OK || !strings.Contains(env.Error.Message, `step "s": the MCP server "tools" did not answer the call of "hang": timed out after 1.5s; its process group was killed`) {
		t.Fatalf("got %+v", env.Error)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	raw, err := os.ReadFile(filepath.Join(ws, "hang.pids"))
	if err != nil {
		t.Fatalf("the hang tool did not run: %v", err)
	}
	f := strings.Fields(string(raw))
	pgid, _ := strconv.Atoi(f[0])
	child, _ := strconv.Atoi(f[1])
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pgid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !gone(pgid) {
		t.Errorf("process group %d (server and its sleep %d) outlived the step", pgid, child)
	}
}

func TestMCPUndeclaredServerRefusedAtValidation(t *testing.T) {
	e, ws, file := setup(t, "name: u\nsteps:\n  - id: first\n    command: cli touch ran\n  - id: s\n    command: mcp search query q=x\n  - id: t\n    command: mcp tools\n")
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	diags := strings.Join(env.Error.Diagnostics, "\n")
	for _, want := range []string{
		`wf.yml:6:14: step "s": the MCP server "search" is not declared (declare it in policy.box.mcp.servers.search: { command: [ARGV…] } (or give it with --mcp-servers); declared: dies, tools)`,
		`wf.yml:8:18: step "t": the mcp step names the server "tools" and no tool (write mcp SERVER TOOL [ARGS], e.g. mcp tools query q=text)`,
	} {
		if !strings.Contains(diags, want) {
			t.Errorf("missing %q in\n%s", want, diags)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("a step ran although the workflow was refused")
	}
}

func TestMCPServerArgvSecretRefused(t *testing.T) {
	e, ws, file := setup(t, "name: u\nsteps:\n  - id: s\n    command: mcp leaky q\n")
	servers := map[string]MCPServer{"leaky": {Command: []string{"srv", "--token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}}
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: servers})
	b, _ := json.Marshal(env)
	if env.OK || !strings.Contains(string(b), `the command of the MCP server \"leaky\" holds what looks like a secret literal (a GitHub token)`) {
		t.Fatalf("got %s", b)
	}
	if strings.Contains(string(b), "ghp_abcdef") {
		t.Errorf("the refusal echoes the secret: %s", b)
	}
}

func TestMCPPauseResumeKeepsServers(t *testing.T) {
	e, ws, file := setup(t, "name: p\nsteps:\n  - id: gate\n    command: cli true\n    approval: required\n  - id: s\n    command: mcp tools greet name=later\n")
	ctx := context.Background()
	env := e.Run(ctx, Request{Pipeline: file, Workspace: ws, MCPServers: testServers(t)})
	if env.Status != StatusNeedsApproval {
		t.Fatalf("run: %+v", env)
	}
	env = e.Resume(ctx, env.RequiresApproval.ResumeToken, true)
	if !env.OK || env.Output[1].Stdout != "hello later" {
		t.Fatalf("resume: %+v %+v", env, env.Error)
	}
}

// BenchmarkMCPStep runs a workflow of one mcp step: the server's start (a Go binary), the
// initialization, the tool list, the call, and the group's end.
func BenchmarkMCPStep(b *testing.B) {
	e, ws, file := setup(b, "name: one\nsteps:\n  - id: s\n    command: mcp tools greet name=b\n")
	servers := testServers(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, MCPServers: servers}); !env.OK {
			b.Fatal(env.Error)
		}
	}
}
