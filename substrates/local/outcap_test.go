package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A claude session prints its result as one JSON object on stdout, which the runner reads when
// it exits. One that prints 50 MB (valid JSON) is cut at the log's cap (10 MiB by default): the
// session fails saying so, and no more than the cap reaches the disk or the runner's memory.
func TestClaudeOutputIsCapped(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("claude"), true)
	huge := `#!/bin/sh
cat >/dev/null
printf '{"type":"result","result":"'
head -c 52428800 /dev/zero | tr '\0' x
printf '"}\n'
`
	path := fakeProgram(t, "claude", huge)
	r := newRunner(t, dir, Options{Env: []string{"PATH=" + path, "HOME=" + t.TempDir()}})
	s := launch(t, r, LaunchRequest{Actor: "develop"})
	got := waitEnded(t, r, s.ID)
	r.Wait()
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "exceeded 10485760 bytes (policy.box.local.logMaxBytes)") {
		t.Fatalf("the session ended %s: %s", got.Status, got.Reason)
	}
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(StateDir), "results", s.ID+".out.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > DefaultLogMaxBytes {
		t.Errorf("%d bytes of its output reached the disk, more than the cap %d", fi.Size(), DefaultLogMaxBytes)
	}
	if log := readFile(t, got.LogPath); !strings.Contains(log, "exceeded 10485760 bytes") {
		t.Errorf("the log does not say why:\n%s", log)
	}
}

// readCapped refuses a file larger than its cap without reading it, and reads one at the cap.
func TestReadCapped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 2048)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readCapped(path, 2047); err == nil || !strings.Contains(err.Error(), "larger than 2047 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	if data, err := readCapped(path, 2048); err != nil || len(data) != 2048 {
		t.Errorf("at the cap: %d bytes, %v", len(data), err)
	}
}
