package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/store"
)

// lookups caches where an agent program was found on PATH, by PATH and name. Only a hit is
// kept, and it is checked again with one stat: a program installed after a miss is found at the
// next launch, one removed after a hit is missed at the next launch.
var lookups sync.Map // lookupKey → string

type lookupKey struct{ path, name string }

// lookPath is exec.LookPath under env's PATH, cached.
func lookPath(env []string, name string) (string, error) {
	path := sessionenv.Lookup(env, "PATH")
	k := lookupKey{path, name}
	if v, ok := lookups.Load(k); ok {
		if fi, err := os.Stat(v.(string)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return v.(string), nil
		}
		lookups.Delete(k)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // like exec.LookPath, a relative PATH entry is not trusted
		}
		full := filepath.Join(dir, name)
		if fi, err := os.Stat(full); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			lookups.Store(k, full)
			return full, nil
		}
	}
	return "", exec.ErrNotFound
}

// Preflight checks that every named actor can start: a skill run by a preset needs the preset's
// program on PATH. A missing one is refused with one line naming the preset, its version and
// the install command. Nothing is recorded.
func (r *Runner) Preflight(actors ...string) error {
	for _, name := range actors {
		cfg, err := r.In.Actor(name)
		if err != nil {
			return &RefusedError{Msg: err.Error()}
		}
		if err := r.In.preflight(r.opts.Env, cfg); err != nil {
			return err
		}
	}
	return nil
}

func (in *Install) preflight(env []string, cfg *ActorConfig) error {
	c := cfg.Command
	if c == nil || !c.Box || len(c.Argv) == 0 {
		return nil
	}
	if over, err := AgentOverride(sessionenv.Lookup(env, AgentEnv)); err != nil {
		return &RefusedError{Msg: err.Error()}
	} else if over != nil {
		return nil // the operator's own command: checked when it starts
	}
	var login string
	if ps, proxied := proxiedPresets(cfg, env); proxied {
		if msg := trialWithoutURL(env, ps); msg != "" {
			return &RefusedError{Msg: fmt.Sprintf("actor %q: %s", cfg.Actor, msg)}
		}
		login = loginRefused(env, cfg.Actor, ps)
	}
	if c.Preset != "" && !strings.Contains(c.Argv[0], "/") {
		if _, err := lookPath(env, c.Argv[0]); err != nil && presetFromCache(env, c) == "" {
			cache := "AUTONOMY_AGENT_CACHE"
			if d := cacheDir(env); d != "" {
				cache = d
			}
			return &RefusedError{Msg: fmt.Sprintf("actor %q: the agent preset %s needs %s, which is not on PATH: install it with npm install --global %s, or make agent-install from a clone of autonomy (into the agent cache, %s) (or run autonomy doctor %s)",
				cfg.Actor, c.Preset, c.Package, c.Package, cache, in.Dir)}
		}
	}
	if login != "" {
		return &RefusedError{Msg: login}
	}
	return nil
}

// cacheDir is the agent cache env names (agentcli.CacheDirIn): where make agent-install and
// scripts/install-agents.sh put the pinned CLIs.
func cacheDir(env []string) string {
	return agentcli.CacheDirIn(func(k string) string { return sessionenv.Lookup(env, k) })
}

// presetFromCache is the pinned CLI of c's preset in env's agent cache, or "" when it is not
// there. A session runs it when the program is not on PATH: an operator's own install on PATH
// comes first, as before the cache was read.
func presetFromCache(env []string, c *Command) string {
	p, ok := agent.Lookup(c.Preset)
	if !ok || !strings.HasPrefix(c.Package, p.Package+"@") {
		return ""
	}
	path, _ := agentcli.Cached(cacheDir(env), p.Name, strings.TrimPrefix(c.Package, p.Package+"@"), p.Bin)
	return path
}

// PreflightSchedule is Preflight for every scheduled actor: what tick and serve fire.
func (r *Runner) PreflightSchedule() error { return r.Preflight(r.scheduler().actors()...) }

// fill resolves a preset's placeholders for a session: the result file, its schema (a copy
// without the DO NOT EDIT member and $schema, in the state folder), the git directories the
// workspace commits into, and the model proxy the preset's BaseURLEnv names.
func (in *Install) fill(ctx context.Context, s store.Session, cfg *ActorConfig, argv, env []string, workdir, resultPath string) ([]string, error) {
	need := map[string]bool{}
	for _, w := range argv {
		if agent.Placeholder(w) {
			need[w] = true
		}
	}
	if len(need) == 0 {
		return argv, nil
	}
	p, ok := agent.Lookup(cfg.Command.Preset)
	if !ok {
		return nil, fmt.Errorf("actor %q: unknown agent preset %q (compile again)", cfg.Actor, cfg.Command.Preset)
	}
	values := map[string]string{agent.Result: resultPath, agent.Proxy: sessionenv.Lookup(env, p.BaseURLEnv)}
	if need[agent.Schema] || need[agent.SchemaJSON] {
		if cfg.Result == "" {
			return nil, fmt.Errorf("actor %q: its agent command asks for a result schema, and it declares none (compile again)", cfg.Actor)
		}
		raw, err := os.ReadFile(in.Path(cfg.Result))
		if err != nil {
			return nil, fmt.Errorf("cannot read the result schema: %v", err)
		}
		clean, err := agent.CleanSchema(raw)
		if err != nil {
			return nil, fmt.Errorf("the result schema %s is %v (compile again)", cfg.Result, err)
		}
		path := in.Path(StateDir + "/results/" + s.ID + ".schema.json")
		if err := writeNew(path, clean, 0o600); err != nil {
			return nil, err
		}
		values[agent.Schema], values[agent.SchemaJSON] = path, string(clean)
	}
	if need[agent.GitDir] || need[agent.WorktreeGitDir] {
		values[agent.GitDir] = gitDir(ctx, workdir, "--git-common-dir")
		values[agent.WorktreeGitDir] = gitDir(ctx, workdir, "--git-dir")
	}
	return p.Fill(argv, values)
}

// presetTemp gives a preset that asks for it its own TMPDIR (agent.Preset.TempEnv); remove is
// never nil.
func presetTemp(cfg *ActorConfig, env []string) (out []string, remove func(), err error) {
	p, ok := agent.Lookup(cfg.Command.Preset)
	if !ok {
		return env, func() {}, nil // fill refused it already
	}
	return p.TempEnv(env)
}

// gitDir is a git directory of workdir (--git-common-dir: the one it commits into; --git-dir: a
// worktree's own), or workdir itself outside a repository.
func gitDir(ctx context.Context, workdir, flag string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", workdir, "rev-parse", "--path-format=absolute", flag).Output()
	if d := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(d) {
		return d
	}
	return workdir
}

// collect turns a preset's output into the session's result after it exited 0: the structured
// result (or the final message) into the result file, the message into the log.
func collect(output, outPath, resultPath string, result bool, max int64, log io.Writer) error {
	if agent.Output(output) != agent.OutputClaudeJSON {
		return nil
	}
	raw, err := readCapped(outPath, max)
	if err != nil {
		return err
	}
	msg, structured, err := agent.Extract(raw)
	fmt.Fprintf(log, "%s\n", msg)
	if err != nil {
		return err
	}
	data := []byte(msg)
	if result {
		if structured == nil {
			return fmt.Errorf("the agent returned no structured result, only: %s", clip(msg))
		}
		data = structured
	}
	return writeNew(resultPath, data, 0o600) // never through a link the agent put there
}

func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	n := 200
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // not within a character
	}
	return s[:n] + "…"
}

// seed gives an isolated worktree the installation's files it lacks (an install that was not
// committed: behaviors, result schemas, resources), and returns a function that removes those
// copies again when they are unchanged, so the worktree is not kept for them. Both ends are
// opened as roots: a symbolic link committed in the worktree (a branch an agent wrote) or left in
// the installation cannot lead a copy out of either.
func (in *Install) seed(workdir string) (func(), error) {
	var m struct {
		Files map[string]string `json:"files"`
	}
	if err := readJSON(in.Dir, ManifestPath, &m); err != nil {
		return nil, err
	}
	src, err := os.OpenRoot(in.Dir)
	if err != nil {
		return nil, err
	}
	dst, err := os.OpenRoot(workdir)
	if err != nil {
		src.Close()
		return nil, err
	}
	paths := make([]string, 0, len(m.Files)+1)
	for p := range m.Files {
		paths = append(paths, p)
	}
	paths = append(paths, ManifestPath)
	sort.Strings(paths)
	type copied struct {
		path string
		data []byte
	}
	var done []copied
	var dirs []string
	undo := func() {
		for _, c := range done {
			if cur, err := dst.ReadFile(c.path); err == nil && bytes.Equal(cur, c.data) {
				_ = dst.Remove(c.path)
			}
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			_ = dst.Remove(dirs[i]) // only when empty
		}
		_ = dst.Close()
	}
	defer src.Close()
	fail := func(err error) (func(), error) {
		undo()
		return nil, err
	}
	for _, p := range paths {
		rel := filepath.FromSlash(p)
		if !filepath.IsLocal(rel) {
			continue
		}
		if _, err := dst.Lstat(rel); err == nil {
			continue // committed: the worktree has its own
		} else if !errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("cannot seed %s: %w", p, err))
		}
		data, err := src.ReadFile(rel)
		if err != nil {
			continue
		}
		for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
			if _, err := dst.Lstat(d); err == nil {
				break
			}
			dirs = append([]string{d}, dirs...)
		}
		if err := dst.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return fail(fmt.Errorf("cannot seed %s: %w", p, err))
		}
		mode := os.FileMode(0o644)
		if fi, err := src.Stat(rel); err == nil && fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		if err := dst.WriteFile(rel, data, mode); err != nil {
			return fail(fmt.Errorf("cannot seed %s: %w", p, err))
		}
		done = append(done, copied{rel, data})
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) < len(dirs[j]) })
	return undo, nil
}
