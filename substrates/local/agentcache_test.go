package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A preset's CLI that is not on PATH is run from the agent cache make agent-install fills
// (AUTONOMY_AGENT_CACHE, else ~/.cache/autonomy-agents of the runner's environment); with no
// cache named, nothing else (not a shared temporary directory) is searched.
func TestPresetRunsFromTheAgentCache(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("codex"), true)
	home := t.TempDir()
	cached := filepath.Join(home, ".cache", "autonomy-agents", "codex-0.169.0", "node_modules", ".bin", "codex")
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cached, []byte(fakeCodex), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	path := "PATH=/usr/bin" + string(os.PathListSeparator) + "/bin"

	var refused *RefusedError
	r0 := newRunner(t, dir, Options{Env: []string{path}})
	if _, err := r0.Launch(ctx, LaunchRequest{Actor: "develop", Ref: "1"}); !errors.As(err, &refused) || !strings.Contains(err.Error(), "make agent-install") {
		t.Fatalf("no cache named: got %v, want a refusal naming make agent-install", err)
	}

	for _, env := range [][]string{{path, "HOME=" + home}, {path, "AUTONOMY_AGENT_CACHE=" + filepath.Join(home, ".cache", "autonomy-agents")}} {
		r := newRunner(t, dir, Options{Env: env})
		res, err := r.Launch(ctx, LaunchRequest{Actor: "develop", Ref: "1"})
		if err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		if s := waitEnded(t, r, res.Session.ID); s.Status != ir.Done {
			t.Fatalf("%v: develop ended %s: %s", env, s.Status, s.Reason)
		}
		if got := readFake(t, dir, res.Session.ID); !strings.Contains(got, "argv=exec ") {
			t.Errorf("%v: the cached codex did not run as the preset: %s", env, got)
		}
	}
}
