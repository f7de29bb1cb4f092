package local

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/agent"
)

// allowedEnv are the variables of the runner's environment every session receives: what a shell,
// git, node and the pinned CLIs need to run, and nothing that grants anything. Everything else
// (a code-host token, a cloud secret, the model credential) stays with the runner unless the
// profile names it in policy.box.local.env (docs/local.md, "The session's environment").
var allowedEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLORTERM": true, "NO_COLOR": true, "TMPDIR": true,
	"XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true,
	// TLS roots a machine behind a corporate proxy points its tools at.
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true,
}

// allowed reports whether the runner's variable k reaches a session of cfg: the allowlist, the
// locale's LC_*, the preset's own configuration, a workflow's declared secrets and its MCP
// servers' env, and the names the profile lists.
func allowed(k string, cfg *ActorConfig) bool {
	if allowedEnv[k] || strings.HasPrefix(k, "LC_") {
		return true
	}
	lists := [][]string{cfg.PassEnv, cfg.Secrets, presetConfigEnv(cfg)}
	for _, srv := range cfg.MCP {
		lists = append(lists, srv.Env) // a workflow's MCP servers get these from its run
	}
	for _, names := range lists {
		if slices.Contains(names, k) {
			return true
		}
	}
	return false
}

// presetConfigEnv is what the actor's preset reads its configuration from, and for a step
// playbook, whose steps run the preset without a proxy of their own, its credential and base URL.
func presetConfigEnv(cfg *ActorConfig) []string {
	if cfg.Command == nil || cfg.Command.Preset == "" {
		return nil
	}
	p, ok := agent.Lookup(cfg.Command.Preset)
	if !ok {
		return nil
	}
	if cfg.Steps {
		return append([]string{p.CredentialEnv, p.BaseURLEnv}, p.ConfigEnv...)
	}
	return p.ConfigEnv
}

// selfBin makes a directory, outside every workspace, holding one link named autonomy to the
// binary that runs the runner, for the front of a session's PATH: an orchestrator's autonomy
// runner launch finds the same autonomy, wherever the operator installed it. remove is never nil.
func (r *Runner) selfBin() (dir string, remove func(), err error) {
	exe := r.opts.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return "", func() {}, fmt.Errorf("cannot find the autonomy binary for its PATH: %v", err)
		}
	}
	if dir, err = os.MkdirTemp("", "autonomy-bin-"); err != nil {
		return "", func() {}, fmt.Errorf("cannot make the directory of autonomy for its PATH: %v", err)
	}
	remove = func() { _ = os.RemoveAll(dir) }
	if err := os.Symlink(exe, filepath.Join(dir, "autonomy")); err != nil {
		remove()
		return "", func() {}, fmt.Errorf("cannot put autonomy on its PATH: %v", err)
	}
	return dir, remove, nil
}

// withPathFirst puts dir at the front of env's PATH.
func withPathFirst(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as for exec
			continue
		}
		out = append(out, kv)
	}
	if path == "" {
		return append(out, "PATH="+dir)
	}
	return append(out, "PATH="+dir+string(os.PathListSeparator)+path)
}
