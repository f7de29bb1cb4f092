package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	osexec "os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// An mcp step is `mcp SERVER TOOL [ARGS]`: it starts SERVER, a stdio MCP server declared in
// policy (policy.box.mcp.servers), in its own process group, calls TOOL once through the
// official Go SDK, and stops the server's whole group. ARGS, the tool's arguments, are one JSON
// object word (e.g. $prev.json), or NAME=VALUE words (a string) and NAME:=JSON words (any JSON
// value); with none, a step's stdin is the arguments object. The tool's text content is the
// step's stdout and its structured content the step's json.

// MCPServer is a server an mcp step may call (policy.box.mcp.servers.NAME).
type MCPServer = resolved.MCPServer

// mcpBaseEnv are the variables of the runner's environment every server gets: what a program
// needs to start, nothing that could hold a credential.
var mcpBaseEnv = []string{"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"}

// mcpTerminate is how long a server may take to exit once its stdin is closed.
const mcpTerminate = 200 * time.Millisecond

// CheckMCP refuses, at their command, mcp steps naming no declared server, and servers whose
// argv holds what looks like a secret literal. The grammar of the command (a server, a tool, the
// arguments) is workflow.Validate's, which reports it at the word.
func CheckMCP(w *workflow.Workflow, servers map[string]MCPServer) ir.Diagnostics {
	if w == nil {
		return nil
	}
	var d ir.Diagnostics
	bad := func(s *workflow.Step, hint, format string, args ...any) {
		d = append(d, ir.Diagnostic{File: w.File, Pos: s.Command.Pos, Severity: ir.Error,
			Message: fmt.Sprintf("step %q: ", s.ID.Value) + fmt.Sprintf(format, args...), Hint: hint})
	}
	for _, s := range w.Steps {
		if s.Namespace != "mcp" {
			continue
		}
		words, err := Words(s.Rest)
		if err != nil {
			continue // reported by workflow.Validate, at the quote
		}
		if _, perr := workflow.ParseMCP(words, workflow.Dynamic); perr != nil {
			continue // reported by workflow.Validate, at the word
		}
		srv, ok := servers[words[0]]
		if !ok {
			bad(s, fmt.Sprintf("declare it in policy.box.mcp.servers.%s: { command: [ARGV…] } (or give it with --mcp-servers)%s", words[0], known(servers)),
				"the MCP server %q is not declared", words[0])
			continue
		}
		if kind := workflow.SecretKind(strings.Join(srv.Command, " ")); kind != "" {
			bad(s, fmt.Sprintf("pass it in the server's environment: list the variable in policy.box.mcp.servers.%s.env", words[0]),
				"the command of the MCP server %q holds what looks like a secret literal (%s)", words[0], kind)
		}
	}
	return d
}

func known(servers map[string]MCPServer) string {
	if len(servers) == 0 {
		return "; no server is declared"
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return "; declared: " + strings.Join(names, ", ")
}

// mcpStep runs an mcp step: argv is SERVER TOOL [ARGS] after substitution.
func (x *exec) mcpStep(ctx context.Context, s *workflow.Step, argv []string, stdin []byte, dir string, out *capped, d time.Duration, rec *record) error {
	c, perr := workflow.ParseMCP(argv, nil)
	if perr != nil {
		return perr
	}
	srv, ok := x.st.MCP[c.Server]
	if !ok {
		return fmt.Errorf("the MCP server %q is not declared (declare it in policy.box.mcp.servers)", c.Server)
	}
	name, tool := c.Server, c.Tool
	args, err := mcpArgs(c.Args, stdin)
	if err != nil {
		return err
	}
	env := x.mcpEnv(srv)
	for _, ev := range s.Env {
		v, err := x.subst(ev.Value.Value, true)
		if err != nil {
			return err
		}
		env = append(env, ev.Name.Value+"="+v)
	}
	if srv.TimeoutMs > 0 && time.Duration(srv.TimeoutMs)*time.Millisecond < d {
		d = time.Duration(srv.TimeoutMs) * time.Millisecond
	}
	structured, err := callMCP(ctx, name, srv, tool, args, dir, env, out, d)
	rec.Stdout, rec.Trunc = out.result()
	if err != nil {
		return err
	}
	if structured != nil {
		rec.JSON = structured
	}
	return nil
}

// mcpEnv is the server's environment: the base variables, then the ones it lists.
func (x *exec) mcpEnv(srv MCPServer) []string {
	var env []string
	for _, k := range mcpBaseEnv {
		if v, ok := lookupEnv(x.e.Env, k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range srv.Env {
		if v, ok := x.e.secret(k); ok {
			env = append(env, k+"="+v)
			if v != "" {
				x.secrets[k] = v // never echoed: redacted like a secret handle
			}
		}
	}
	return env
}

// mcpArgs is the tool's arguments object: those the command's words give (ParseMCP), else with
// none the step's stdin, a JSON object.
func mcpArgs(words map[string]any, stdin []byte) (map[string]any, error) {
	if words != nil {
		return words, nil
	}
	args := map[string]any{}
	if len(strings.TrimSpace(string(stdin))) > 0 {
		if err := json.Unmarshal(stdin, &args); err != nil {
			return nil, fmt.Errorf("the stdin of an mcp step is the tool's arguments, a JSON object: %v", err)
		}
	}
	return args, nil
}

// callMCP starts the server in its own process group, calls the tool, and kills the group,
// whatever happened, before it returns. The tool's text content goes to out; its structured
// content is returned as JSON.
func callMCP(parent context.Context, name string, srv MCPServer, tool string, args map[string]any, dir string, env []string, out *capped, d time.Duration) ([]byte, error) {
	fix := "check policy.box.mcp.servers." + name
	if len(srv.Command) == 0 {
		return nil, fmt.Errorf("the MCP server %q has no command (%s)", name, fix)
	}
	path := srv.Command[0]
	if !strings.ContainsRune(path, '/') {
		p, err := lookPath(env, path)
		if err != nil {
			return nil, fmt.Errorf("the MCP server %q: %v (%s.command)", name, err, fix)
		}
		path = p
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errBuf := &capped{max: 8192}
	cmd := &osexec.Cmd{Path: path, Args: srv.Command, Dir: dir, Env: env, Stdin: inR, Stdout: outW, Stderr: errBuf, SysProcAttr: proc.SysProcAttr(),
		// A grandchild that left the group may hold stderr open: Wait does not wait for it long.
		WaitDelay: time.Second}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting the MCP server %q: %v (%s.command)", name, err, fix)
	}
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	ctx, cancel := context.WithTimeout(parent, d)
	defer cancel()
	var cs *mcp.ClientSession
	defer func() {
		// The group goes, whatever the outcome: a server is started for one call.
		_ = proc.Kill(pgid)
		<-exited
		if cs != nil {
			_ = cs.Close()
		} else {
			inW.Close()
			outR.Close()
		}
	}()
	// why explains a failed exchange: the timeout, a stop, or the server's early exit.
	why := func(what string, err error) error {
		switch {
		case parent.Err() != nil:
			return fmt.Errorf("stopped: %v", parent.Err())
		case ctx.Err() != nil:
			return fmt.Errorf("the MCP server %q did not answer %s: timed out after %v; its process group was killed (raise the step's timeoutMs or %s.timeoutMs)", name, what, d, fix)
		}
		select {
		case <-exited:
		case <-time.After(mcpTerminate):
			return fmt.Errorf("the MCP server %q failed %s: %v", name, what, err)
		}
		msg := strings.TrimSpace(errBuf.String())
		if msg != "" {
			msg = ": " + lastLine(msg)
		}
		return fmt.Errorf("the MCP server %q exited (%s) before answering %s%s (%s.command)", name, cmd.ProcessState, what, msg, fix)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "autonomy", Version: "v1"}, nil)
	tr := &mcp.IOTransport{Reader: outR, Writer: inW, MaxLineLength: 2*out.max + 64<<10}
	if cs, err = client.Connect(ctx, tr, nil); err != nil {
		return nil, why("the initialization", err)
	}
	var names []string
	found := false
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, why("the tool list", err)
		}
		names = append(names, t.Name)
		found = found || t.Name == tool
	}
	if !found {
		sort.Strings(names)
		return nil, fmt.Errorf("the MCP server %q has no tool %q (it has: %s); fix the step's command", name, tool, strings.Join(names, ", "))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, why(fmt.Sprintf("the call of %q", tool), err)
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	_, _ = out.Write([]byte(strings.Join(texts, "\n")))
	if _, over := out.result(); over {
		return nil, fmt.Errorf("its output passed the cap of %d bytes (maxOutputBytes)", out.max)
	}
	if res.IsError {
		msg, _ := out.result()
		return nil, fmt.Errorf("the tool %q of the MCP server %q reported an error: %s", tool, name, strings.TrimSpace(msg))
	}
	if res.StructuredContent == nil {
		return nil, nil
	}
	j, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("the structured content of %q: %v", tool, err)
	}
	if len(j) > out.max {
		return nil, fmt.Errorf("its structured content passed the cap of %d bytes (maxOutputBytes)", out.max)
	}
	return j, nil
}

// secretNames are the names whose values are redacted from everything a run shows: the allowed
// secret handles and the variables handed to MCP servers.
func secretNames(st *state) []string {
	names := append([]string(nil), st.Secrets...)
	for _, srv := range st.MCP {
		names = append(names, srv.Env...)
	}
	return names
}

// ServersOf converts policy.box.mcp.servers, as ir read it, to what a Request takes.
func ServersOf(p ir.Policy) map[string]MCPServer { return resolved.ServersOf(p) }

var envVarName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// MaxMCPTimeoutMs is the largest timeoutMs of an MCP server, as a profile's
// policy.box.mcp.servers.NAME.timeoutMs allows it.
const MaxMCPTimeoutMs = math.MaxInt32

// ParseServers reads the MCP servers of `playbook run --mcp-servers`, a JSON object as
// policy.box.mcp.servers ({"NAME": {"command": [ARGV...], "env": [VAR...], "timeoutMs": N}}),
// with the checks a profile's servers get: an unknown key, a server without a command, and a
// timeoutMs outside 1 to MaxMCPTimeoutMs are refused, each error naming the server and the fix.
func ParseServers(text string) (map[string]MCPServer, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil || raw == nil {
		return nil, fmt.Errorf(`not a JSON object of servers ({"NAME": {"command": [ARGV...]}}): %v`, err)
	}
	out := make(map[string]MCPServer, len(raw))
	for name, data := range raw {
		var s struct {
			Command   []string `json:"command"`
			Env       []string `json:"env"`
			TimeoutMs *int64   `json:"timeoutMs"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf(`server %q: %v (give {"command": [ARGV...], "env": [VAR...], "timeoutMs": N})`, name, err)
		}
		if len(s.Command) == 0 || s.Command[0] == "" {
			return nil, fmt.Errorf(`server %q has no command (give its argv, e.g. "command": ["search-mcp", "--stdio"])`, name)
		}
		for _, e := range s.Env {
			if !envVarName().MatchString(e) {
				return nil, fmt.Errorf("server %q: env: %q is not an environment variable name (e.g. SEARCH_TOKEN)", name, e)
			}
		}
		srv := MCPServer{Command: s.Command, Env: s.Env}
		if s.TimeoutMs != nil {
			if *s.TimeoutMs < 1 || *s.TimeoutMs > MaxMCPTimeoutMs {
				return nil, fmt.Errorf("server %q: timeoutMs must be from 1 to %d milliseconds, not %d (or leave it out: the step's timeout)", name, MaxMCPTimeoutMs, *s.TimeoutMs)
			}
			srv.TimeoutMs = int(*s.TimeoutMs)
		}
		out[name] = srv
	}
	return out, nil
}
