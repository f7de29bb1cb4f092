// Package agentcli locates and installs the pinned agent CLIs (the codex and
// claude presets) in a cache outside the repository, so tests and `make
// agent-install` agree on where a pinned version lives.
//
// The cache is $AUTONOMY_AGENT_CACHE, or $HOME/.cache/autonomy-agents when it
// is unset. A pinned CLI is installed with npm under <cache>/<preset>-<version>
// and its program is <cache>/<preset>-<version>/node_modules/.bin/<program>.
// Find also accepts a program on PATH when its --version reports the pinned
// version.
package agentcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// CacheEnv names the variable that overrides the cache directory.
const CacheEnv = "AUTONOMY_AGENT_CACHE"

// SmokeEnv names the variable that turns a missing CLI from a skipped test
// into a failed one (CI sets AUTONOMY_AGENT_SMOKE=1).
const SmokeEnv = "AUTONOMY_AGENT_SMOKE"

// Pin is one agent CLI pinned to an exact npm version.
type Pin struct {
	// Preset is the agent preset name in policy.box.<substrate>.agent.
	Preset string
	// Package is the npm package that ships the CLI.
	Package string
	// Version is the exact npm version the project was tested with.
	Version string
	// Program is the executable the package installs.
	Program string
}

// Spec is the npm install argument, package@version.
func (p Pin) Spec() string { return p.Package + "@" + p.Version }

// Pins lists the agent CLIs the project is tested with, in preset order.
var Pins = []Pin{
	// OpenAI Codex CLI: a Rust binary shipped through npm; `codex exec` runs it non-interactively.
	{Preset: "codex", Package: "@openai/codex", Version: "0.169.0", Program: "codex"},
	// Claude Code: a native binary shipped through npm; `claude -p` runs it non-interactively.
	{Preset: "claude", Package: "@anthropic-ai/claude-code", Version: "2.1.330", Program: "claude"},
}

// Lookup returns the pin of a preset.
func Lookup(preset string) (Pin, bool) {
	for _, p := range Pins {
		if p.Preset == preset {
			return p, true
		}
	}
	return Pin{}, false
}

// CacheDir is the directory pinned CLIs are installed under.
func CacheDir() string {
	if d := CacheDirIn(os.Getenv); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "autonomy-agents")
}

// CacheDirIn is the cache an environment other than the process's names (getenv reads it), or
// "" when it names none (neither AUTONOMY_AGENT_CACHE nor a home): the local runner looks for a
// preset's CLI where its operator's `make agent-install` put it, and never in a shared temporary
// directory, where anyone could put a program.
func CacheDirIn(getenv func(string) string) string {
	if d := getenv(CacheEnv); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" && runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "autonomy-agents")
}

// Cached returns the program of a pinned version installed in cache (CacheDirIn), if it is
// there and executable; never for an empty or relative cache.
func Cached(cache, preset, version, program string) (string, bool) {
	if cache == "" || !filepath.IsAbs(cache) {
		return "", false
	}
	path := filepath.Join(cache, preset+"-"+version, "node_modules", ".bin", program)
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 && runtime.GOOS != "windows" {
		return "", false
	}
	return path, true
}

// Dir is the npm prefix of one pinned version in the cache.
func Dir(preset, version string) string {
	return filepath.Join(CacheDir(), preset+"-"+version)
}

// InstallCommand is the shell command that installs a pinned CLI into the
// cache, for error messages and docs.
func InstallCommand(preset, version string) string {
	p, ok := Lookup(preset)
	if !ok {
		return fmt.Sprintf("unknown agent preset %q (known: %s)", preset, presetNames())
	}
	return fmt.Sprintf("npm install --prefix %q %s@%s", Dir(preset, version), p.Package, version)
}

// ErrNotFound reports that a pinned CLI is neither in the cache nor on PATH.
var ErrNotFound = errors.New("agent CLI not installed")

// Find returns the path of the pinned program of a preset: the cached install
// first, then a program on PATH whose --version names the version. The error
// wraps ErrNotFound and names the install command.
func Find(preset, version string) (string, error) {
	p, ok := Lookup(preset)
	if !ok {
		return "", fmt.Errorf("unknown agent preset %q (known: %s)", preset, presetNames())
	}
	cached := filepath.Join(Dir(preset, version), "node_modules", ".bin", p.Program)
	if fi, err := os.Stat(cached); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return cached, nil
	}
	if onPath, err := exec.LookPath(p.Program); err == nil {
		got, verr := Version(onPath)
		if verr == nil && got == version {
			return onPath, nil
		}
		if verr == nil {
			return "", fmt.Errorf("%w: %s on PATH (%s) is version %s, the %s preset is pinned to %s; install it with: %s",
				ErrNotFound, p.Program, onPath, got, preset, version, InstallCommand(preset, version))
		}
	}
	return "", fmt.Errorf("%w: %s %s (preset %s) is not in %s nor on PATH; install it with: %s",
		ErrNotFound, p.Package, version, preset, Dir(preset, version), InstallCommand(preset, version))
}

// Version runs `program --version` (5 s at most) and returns the first
// dotted version number it prints: "codex-cli 0.169.0" and
// "2.1.330 (Claude Code)" both give the bare number.
func Version(program string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, program, "--version")
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s --version: %w", program, err)
	}
	for _, f := range strings.Fields(out.String()) {
		if isVersion(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("%s --version printed no version: %q", program, strings.TrimSpace(out.String()))
}

func isVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return false
			}
		}
	}
	return true
}

// Install installs a pinned CLI into the cache with npm and returns its
// program path. It is what scripts/install-agents.sh does, for tests that
// want to install on demand.
func Install(ctx context.Context, preset, version string) (string, error) {
	p, ok := Lookup(preset)
	if !ok {
		return "", fmt.Errorf("unknown agent preset %q (known: %s)", preset, presetNames())
	}
	dir := Dir(preset, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--prefix", dir, p.Package+"@"+version)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %w\n%s", p.Package, version, err, out)
	}
	return Find(preset, version)
}

func presetNames() string {
	names := make([]string, len(Pins))
	for i, p := range Pins {
		names[i] = p.Preset
	}
	return strings.Join(names, ", ")
}
