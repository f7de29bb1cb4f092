package agentcli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The install script carries its own copy of the pins (it runs before Go
// does); it must name exactly the pins of this package.
func TestInstallScriptMatchesPins(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "install-agents.sh"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  "(\S+) (\S+) (\S+) (\S+)"$`)
	var got []Pin
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		got = append(got, Pin{Preset: m[1], Package: m[2], Version: m[3], Program: m[4]})
	}
	if len(got) != len(Pins) {
		t.Fatalf("install-agents.sh pins %v, want %v", got, Pins)
	}
	for i := range Pins {
		if got[i] != Pins[i] {
			t.Errorf("install-agents.sh pin %d = %+v, want %+v", i, got[i], Pins[i])
		}
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "/x/cache")
	if got := Dir("codex", "1.2.3"); got != "/x/cache/codex-1.2.3" {
		t.Errorf("Dir = %q", got)
	}
	t.Setenv(CacheEnv, "")
	t.Setenv("HOME", "/home/u")
	if got := CacheDir(); got != "/home/u/.cache/autonomy-agents" {
		t.Errorf("CacheDir = %q", got)
	}
}

func writeProgram(t *testing.T, path, version string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'codex-cli " + version + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	cache := t.TempDir()
	bin := t.TempDir()
	t.Setenv(CacheEnv, cache)
	t.Setenv("PATH", bin)

	// Missing everywhere: ErrNotFound with the install command.
	_, err := Find("codex", "0.169.0")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "npm install --prefix") {
		t.Fatalf("Find with nothing installed: %v", err)
	}
	// On PATH with another version: refused, naming both versions.
	writeProgram(t, filepath.Join(bin, "codex"), "0.1.0")
	_, err = Find("codex", "0.169.0")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "version 0.1.0") {
		t.Fatalf("Find with a wrong version on PATH: %v", err)
	}
	// On PATH with the pinned version.
	writeProgram(t, filepath.Join(bin, "codex"), "0.169.0")
	if got, err := Find("codex", "0.169.0"); err != nil || got != filepath.Join(bin, "codex") {
		t.Fatalf("Find on PATH = %q, %v", got, err)
	}
	// In the cache: preferred over PATH.
	cached := filepath.Join(cache, "codex-0.169.0", "node_modules", ".bin", "codex")
	writeProgram(t, cached, "0.169.0")
	if got, err := Find("codex", "0.169.0"); err != nil || got != cached {
		t.Fatalf("Find in cache = %q, %v", got, err)
	}
	if _, err := Find("gemini", "1"); err == nil || !strings.Contains(err.Error(), "known: codex, claude") {
		t.Fatalf("unknown preset: %v", err)
	}
}

func TestVersionParsesBothCLIs(t *testing.T) {
	dir := t.TempDir()
	for out, want := range map[string]string{"codex-cli 0.169.0": "0.169.0", "2.1.330 (Claude Code)": "2.1.330"} {
		p := filepath.Join(dir, "v")
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := Version(p); err != nil || got != want {
			t.Errorf("Version(%q) = %q, %v; want %q", out, got, err, want)
		}
	}
}

// Install runs npm with the cache prefix and the pinned spec, then finds the
// program it installed.
func TestInstallRunsNpm(t *testing.T) {
	cache, bin := t.TempDir(), t.TempDir()
	t.Setenv(CacheEnv, cache)
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	log := filepath.Join(bin, "npm.log")
	// A stand-in npm: records its argv and installs a codex that reports the version.
	npm := `#!/bin/sh
echo "$@" > ` + log + `
prefix=$5
mkdir -p "$prefix/node_modules/.bin"
printf '#!/bin/sh\necho codex-cli 0.169.0\n' > "$prefix/node_modules/.bin/codex"
chmod +x "$prefix/node_modules/.bin/codex"
`
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(npm), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Install(context.Background(), "codex", "0.169.0")
	want := filepath.Join(cache, "codex-0.169.0", "node_modules", ".bin", "codex")
	if err != nil || got != want {
		t.Fatalf("Install = %q, %v; want %q", got, err, want)
	}
	argv, _ := os.ReadFile(log)
	if strings.TrimSpace(string(argv)) != "install --no-audit --no-fund --prefix "+filepath.Join(cache, "codex-0.169.0")+" @openai/codex@0.169.0" {
		t.Errorf("npm argv = %q", argv)
	}
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte("#!/bin/sh\necho registry down >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(context.Background(), "claude", "2.1.330"); err == nil || !strings.Contains(err.Error(), "registry down") {
		t.Errorf("a failing npm: %v", err)
	}
}
