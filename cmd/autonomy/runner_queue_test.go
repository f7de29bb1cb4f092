//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerListShowsQueued: two agents of the installation root, launched one after the other
// by the CLI (each under its own supervisor process): one waits, and runner list shows it queued,
// waiting for the other; both end done.
func TestRunnerListShowsQueued(t *testing.T) {
	t.Parallel()
	yml := `schema: autonomy.ir.v1
targets: [local]
actors:
  writer:
    behavior: skills/writer
    triggers: [{ dispatch: true }]
    result: { schema: none } # the queue, not the result, is under test
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat >/dev/null; until [ -f "$AUTONOMY_DIR/go" ]; do sleep 0.05; done']
`
	dir := runnerFleet(t, yml, map[string]string{"skills/writer/SKILL.md": "# writer\n"})
	first, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "writer")
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	first = strings.TrimSpace(first)
	second, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "writer")
	if code != 0 {
		t.Fatalf("launch: exit %d: %s", code, errOut)
	}
	second = strings.TrimSpace(second)
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _, _ := cli(t, nil, "runner", "--dir", dir, "list")
		// Whichever supervisor took the root first, the other waits for it.
		queued := false
		for _, l := range strings.Split(out, "\n") {
			queued = queued || strings.HasPrefix(l, second+" ") && strings.Contains(l, " queued ") && strings.Contains(l, "waiting for session "+first) ||
				strings.HasPrefix(l, first+" ") && strings.Contains(l, " queued ") && strings.Contains(l, "waiting for session "+second)
		}
		if queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list never showed %s queued behind %s:\n%s", second, first, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The agents wait for this file: the one holding the root ends only once the other was seen
	// queued.
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, s := range waitAllEnded(t, st, 2) {
		if s.Status != "done" {
			t.Errorf("%s ended %s: %s", s.ID, s.Status, s.Reason)
		}
	}
	// get shows that one of them waited, and for whom, in its events.
	a, _, _ := cli(t, nil, "runner", "--dir", dir, "get", first)
	b, _, _ := cli(t, nil, "runner", "--dir", dir, "get", second)
	if !strings.Contains(a+b, "  queued  queued: waiting for session ") || !strings.Contains(a+b, "  dequeued  ") {
		t.Errorf("get shows no queued event:\n%s\n%s", a, b)
	}
}
