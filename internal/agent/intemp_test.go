//go:build unix

package agent_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli"
)

// inTemp returns the pinned program of preset installed under the temporary directory: program
// itself when the agent cache is there already, else a copy of its npm prefix in a directory of
// the test (hard links where the file system allows). A CLI found on PATH rather than in the
// cache fails the test: its install cannot be copied.
func inTemp(t *testing.T, preset, program string) string {
	t.Helper()
	if under(program, os.TempDir()) {
		return program
	}
	p, _ := agent.Lookup(preset)
	prefix := agentcli.Dir(preset, p.Version)
	if !under(program, prefix) {
		t.Fatalf("%s is not in the agent cache %s: install it there (make agent-install) so the test can copy it under %s", program, agentcli.CacheDir(), os.TempDir())
	}
	copied := filepath.Join(t.TempDir(), filepath.Base(prefix))
	if out, err := exec.Command("cp", "-al", prefix, copied).CombinedOutput(); err != nil {
		t.Logf("cannot hard-link %s under %s (%v: %s): copying it", prefix, os.TempDir(), err, strings.TrimSpace(string(out)))
		_ = os.RemoveAll(copied)
		if out, err := exec.Command("cp", "-a", prefix, copied).CombinedOutput(); err != nil {
			t.Fatalf("cp -a %s %s: %v\n%s", prefix, copied, err, out)
		}
	}
	rel, _ := filepath.Rel(prefix, program)
	return filepath.Join(copied, rel)
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
