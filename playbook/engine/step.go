package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

func lookupOS(name string) (string, bool) { return os.LookupEnv(name) }

// step runs one step's command, filling rec.
func (x *exec) step(ctx context.Context, s *workflow.Step, rec *record) error {
	timeout := x.st.TimeoutMs
	if s.TimeoutMs.Value > 0 && s.TimeoutMs.Value < timeout {
		timeout = s.TimeoutMs.Value
	}
	dir, err := confine(x.st.Workspace, x.st.Cwd, s.Cwd.Value)
	if err != nil {
		return fmt.Errorf("cwd: %v", err)
	}
	var stdin []byte
	if s.Stdin.Value != "" {
		in, err := x.subst(s.Stdin.Value, false)
		if err != nil {
			return err
		}
		stdin = []byte(in)
	}
	words, err := Words(s.Rest)
	if err != nil {
		return err
	}
	argv := make([]string, len(words))
	for i, w := range words {
		if argv[i], err = x.subst(w, true); err != nil {
			return err
		}
	}
	if s.Namespace == "cli" {
		if err := optionFromValue(words, argv); err != nil {
			return err
		}
	}
	out := &capped{max: x.st.MaxOutputBytes}
	d := time.Duration(timeout) * time.Millisecond
	if s.Namespace == "node" {
		// A node step is a cli step running Node on a script inside the workspace (node.go).
		if argv, err = x.nodeArgv(dir, argv); err != nil {
			return err
		}
	}
	switch s.Namespace {
	case "cli", "node":
		env := x.e.Env
		if env == nil {
			env = os.Environ()
		}
		env = append([]string(nil), env...)
		for _, ev := range s.Env {
			v, err := x.subst(ev.Value.Value, true)
			if err != nil {
				return err
			}
			env = append(env, ev.Name.Value+"="+v)
		}
		if len(argv) > 0 {
			if why, fix := x.st.CLI.Refuses(argv[0]); why != "" {
				return fmt.Errorf("%s (%s)", why, fix)
			}
		}
		code, err := runCLI(ctx, argv, dir, env, stdin, out, d, x.e.drain())
		rec.ExitCode = code
		rec.Stdout, rec.Trunc = out.result()
		if err != nil {
			return err
		}
	case "http":
		err := runHTTP(ctx, argv, stdin, out, d)
		rec.Stdout, rec.Trunc = out.result()
		if err != nil {
			return err
		}
	case "web":
		err := runWeb(ctx, argv, x.st.Web, out, d) // web.go
		rec.Stdout, rec.Trunc = out.result()
		if err != nil {
			return err
		}
	case "mcp":
		if err := x.mcpStep(ctx, s, argv, stdin, dir, out, d, rec); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%s steps are not supported by this runtime", s.Namespace)
	}
	if s.Output.Value == "json" && rec.JSON == nil {
		j, err := jsonOutput([]byte(rec.Stdout))
		if err != nil {
			return err
		}
		rec.JSON = j
	}
	return nil
}

// runCLI execs argv directly (never through a shell) in its own process group, killing the
// whole group at the timeout or when the output passes the cap. The step ends when its process
// exits: output still held open then (by a child left in the background) is read for drain at
// most, and the group is killed.
func runCLI(ctx context.Context, argv []string, dir string, env []string, stdin []byte, out *capped, d, drain time.Duration) (*int, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("the command is empty")
	}
	path := argv[0]
	if !strings.ContainsRune(path, '/') {
		p, err := lookPath(env, path)
		if err != nil {
			return nil, err
		}
		path = p
	}
	cmd := &osexec.Cmd{Path: path, Args: argv, Dir: dir, Env: env, SysProcAttr: proc.SysProcAttr(), // its own process group
		WaitDelay: drain} // Wait returns at most drain after the process exits, whoever holds its output
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = out
	var errBuf capped
	errBuf.max = 8192
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", argv[0], err)
	}
	pgid := cmd.Process.Pid
	kill := func() { _ = proc.Kill(pgid) }
	out.whenOver(kill)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var err error
	var why string
	select {
	case err = <-done:
	case <-timer.C:
		why = fmt.Sprintf("timed out after %v; its process group was killed", d)
	case <-ctx.Done():
		why = "stopped: " + ctx.Err().Error()
	}
	if why != "" {
		kill()
		<-done
		return nil, errors.New(why)
	}
	// A child left behind in the group (a daemonized grandchild) goes with the step.
	kill()
	if errors.Is(err, osexec.ErrWaitDelay) {
		err = nil // it exited 0; what it left running held the output open past the drain
	}
	code := cmd.ProcessState.ExitCode()
	if _, over := out.result(); over {
		return &code, fmt.Errorf("its output passed the cap of %d bytes (maxOutputBytes); the step was stopped", out.max)
	}
	if err != nil {
		msg := strings.TrimSpace(errBuf.String())
		if msg != "" {
			msg = ": " + lastLine(msg)
		}
		return &code, fmt.Errorf("%s exited with status %d%s", argv[0], code, msg)
	}
	return &code, nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// lookPath finds name in env's PATH.
func lookPath(env []string, name string) (string, error) {
	pathVar, _ := lookupEnv(env, "PATH")
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found in PATH", name)
}

// runHTTP makes the request `METHOD URL [-H 'Name: value']...`; the step's stdin is the body.
// The response body is the step's stdout; a status outside 2xx fails the step.
func runHTTP(ctx context.Context, argv []string, body []byte, out *capped, d time.Duration) error {
	c, perr := workflow.ParseHTTP(argv, nil)
	if perr != nil {
		return perr
	}
	method, url := c.Method, c.URL
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	for _, h := range c.Headers {
		req.Header.Add(h[0], h[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("timed out after %v", d)
		}
		return err
	}
	return readBody(resp, out, method+" "+url)
}

// readBody reads a response's body into out, failing past its cap or on a status outside 2xx
// (what names the request).
func readBody(resp *http.Response, out *capped, what string) error {
	defer resp.Body.Close()
	_, err := io.Copy(out, io.LimitReader(resp.Body, int64(out.max)+1))
	if _, over := out.result(); over {
		return fmt.Errorf("its output passed the cap of %d bytes (maxOutputBytes)", out.max)
	}
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", what, resp.Status)
	}
	return nil
}

// capped keeps at most max bytes and notes when more came. Its writer is the goroutine copying
// a process's output, so its state is locked.
type capped struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	max    int
	over   bool
	onOver func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room < len(p) {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		if !c.over {
			c.over = true
			if c.onOver != nil {
				c.onOver()
			}
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// whenOver sets what to do when the cap is passed, doing it now if it already was.
func (c *capped) whenOver(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onOver = f
	if c.over {
		f()
	}
}

// result is what was kept, and whether more came.
func (c *capped) result() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String(), c.over
}

func (c *capped) String() string { s, _ := c.result(); return s }

// confine resolves cwd (relative to the workspace) then sub, and refuses a path that leaves
// the workspace, by .. or through a symlink.
func confine(workspace, cwd, sub string) (string, error) {
	p := workspace
	for _, part := range []string{cwd, sub} {
		if part == "" {
			continue
		}
		if filepath.IsAbs(part) {
			return "", fmt.Errorf("%q is absolute; give a path inside the workspace", part)
		}
		p = filepath.Join(p, part)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if !inside(workspace, p) {
			return "", fmt.Errorf("%q leaves the workspace", strings.TrimPrefix(p, workspace))
		}
		return "", err
	}
	if !inside(workspace, real) {
		return "", fmt.Errorf("%q leaves the workspace %s (through .. or a symlink)", filepath.Join(cwd, sub), workspace)
	}
	return real, nil
}

func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// optionFromValue refuses an argument that a reference made an option: a word that starts with a
// reference (a literal word never does: it is the author's) whose value starts with "-", before
// any "--" that ends the options. A value comes from the launch (an issue's text, a model's
// launch) or an earlier step's output, and `git tag $args.VERSION` with VERSION=--list, or
// `--upload-pack=…`, would run something else.
func optionFromValue(words, argv []string) error {
	for i := 1; i < len(words); i++ {
		if words[i] == "--" {
			return nil
		}
		loc := workflow.RefPattern().FindStringIndex(words[i])
		if loc == nil || loc[0] != 0 || !strings.HasPrefix(argv[i], "-") {
			continue
		}
		ref := words[i][loc[0]:loc[1]]
		fix := strings.Join(words[:i], " ") + " -- " + strings.Join(words[i:], " ")
		// The value is quoted, clipped, unless the word holds a secret: redaction replaces a
		// secret's whole value, never a clipped prefix of it.
		value := fmt.Sprintf("%q", clipValue(argv[i]))
		if strings.Contains(words[i], "$"+workflow.SecretsRef+".") {
			value = "a secret's value"
		}
		return fmt.Errorf("the value of %s, %s, starts with \"-\", and %s would read it as an option: put -- before it in the command (%s), or give a value that does not start with -",
			ref, value, words[0], fix)
	}
	return nil
}

// clipValue shortens a value for an error message.
func clipValue(v string) string {
	if c, cut := clip(v, 60); cut {
		return c + "…"
	}
	return v
}

// subst replaces the references of v with their values. trim drops the trailing newline of a
// $id.stdout (for an argument); stdin keeps it.
func (x *exec) subst(v string, trim bool) (string, error) {
	var firstErr error
	out := workflow.RefPattern().ReplaceAllStringFunc(v, func(m string) string {
		sub := workflow.RefPattern().FindStringSubmatch(m)
		val, ok, err := x.value(sub[1], sub[2], strings.TrimPrefix(sub[3], "."), trim)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if !ok {
			return m
		}
		return val
	})
	return out, firstErr
}

// value is one reference's value; ok is false for text that is no reference ($HOME.x).
func (x *exec) value(name, field, path string, trim bool) (string, bool, error) {
	switch name {
	case workflow.SecretsRef:
		v, ok := x.secrets[field]
		if !ok {
			return "", true, fmt.Errorf("the secret handle $secrets.%s resolves to nothing (set it in the environment)", field)
		}
		return v, true, nil
	case workflow.ArgsRef:
		v, ok := x.st.Args[field]
		return v, ok, nil
	}
	for _, r := range x.st.Results {
		if r.ID != name {
			continue
		}
		switch field {
		case "stdout":
			if trim {
				return strings.TrimRight(r.Stdout, "\n"), true, nil
			}
			return r.Stdout, true, nil
		case "approved":
			return fmt.Sprint(r.Approved), true, nil
		case "json":
			if r.Status == "skipped" {
				return "null", true, nil
			}
			return jsonPath(r.JSON, path)
		}
	}
	// A step not run (skipped by its condition): its output is empty, its approval false.
	for _, s := range x.w.Steps {
		if s.ID.Value == name {
			switch field {
			case "approved":
				return "false", true, nil
			case "json":
				return "null", true, nil
			}
			return "", true, nil
		}
	}
	return "", false, nil
}

func jsonPath(raw []byte, path string) (string, bool, error) {
	if path == "" {
		return string(raw), true, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", true, err
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "null", true, nil
		}
		v = m[k]
	}
	if s, ok := v.(string); ok {
		return s, true, nil
	}
	b, _ := json.Marshal(v)
	return string(b), true, nil
}

// condition evaluates `A`, `!A`, `A == B` or `A != B` after substitution; a value is true
// unless empty, false, 0, null, [] or {}.
func (x *exec) condition(c string) (bool, error) {
	c = strings.TrimSpace(c)
	for _, op := range []string{"==", "!="} {
		if l, r, ok := strings.Cut(c, op); ok {
			lv, err := x.operand(l)
			if err != nil {
				return false, err
			}
			rv, err := x.operand(r)
			if err != nil {
				return false, err
			}
			return (lv == rv) == (op == "=="), nil
		}
	}
	neg := strings.HasPrefix(c, "!")
	v, err := x.operand(strings.TrimPrefix(c, "!"))
	if err != nil {
		return false, err
	}
	switch v {
	case "", "false", "0", "null", "[]", "{}":
		return neg, nil
	}
	return !neg, nil
}

func (x *exec) operand(s string) (string, error) {
	v, err := x.subst(strings.TrimSpace(s), true)
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v, err
}
