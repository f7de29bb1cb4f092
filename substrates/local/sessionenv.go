package local

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// allowed reports whether the runner's variable k reaches a session of cfg: the allowlist
// (internal/sessionenv; docs/local.md, "The session's environment"), the
// locale's LC_*, the preset's own configuration, a workflow's declared secrets and its MCP
// servers' env, and the names the profile lists.
func allowed(k string, cfg *ActorConfig) bool {
	if sessionenv.Allowed(k) {
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

// presetConfigEnv is what the actor's preset reads its configuration from. Its credential and
// base URL never pass: a preset's session, a step playbook's steps too, holds the placeholder and
// the URL of the model proxy its supervisor runs (modelproxy.go).
func presetConfigEnv(cfg *ActorConfig) []string {
	if cfg.Command == nil || cfg.Command.Preset == "" {
		return nil
	}
	p, ok := agent.Lookup(cfg.Command.Preset)
	if !ok {
		return nil
	}
	return p.ConfigEnv
}

// BinDir holds, per autonomy binary, a folder with one link named autonomy to it: what the
// front of a session's PATH names (selfBin).
const BinDir = StateDir + "/bin"

// selfBin is a folder, outside every workspace and kept with the installation's state, holding
// one link named autonomy to the binary that runs the runner, for the front of a session's PATH:
// an orchestrator's autonomy runner launch finds the same autonomy, wherever the operator
// installed it. The folder is named by the binary's path, made once and checked at each session:
// nothing is left behind when a supervisor is killed.
func (r *Runner) selfBin() (string, error) {
	exe, err := r.exe()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(exe))
	dir := r.In.Path(BinDir + "/" + hex.EncodeToString(sum[:8]))
	link := filepath.Join(dir, "autonomy")
	if cur, err := os.Readlink(link); err == nil && cur == exe {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot make the directory of autonomy for its PATH: %v", err)
	}
	// A new link renamed over the old one: a session starting meanwhile sees one or the other.
	tmp, err := os.MkdirTemp(dir, ".new-")
	if err != nil {
		return "", fmt.Errorf("cannot put autonomy on its PATH: %v", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Symlink(exe, filepath.Join(tmp, "autonomy")); err != nil {
		return "", fmt.Errorf("cannot put autonomy on its PATH: %v", err)
	}
	if err := os.Rename(filepath.Join(tmp, "autonomy"), link); err != nil {
		return "", fmt.Errorf("cannot put autonomy on its PATH: %v", err)
	}
	return dir, nil
}

// exe is the absolute path of the autonomy binary that runs the runner.
func (r *Runner) exe() (string, error) {
	exe := r.opts.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("cannot find the autonomy binary: %v", err)
		}
	}
	return filepath.Abs(exe)
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
