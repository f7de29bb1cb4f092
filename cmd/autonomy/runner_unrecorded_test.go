//go:build unix

package main

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerGetSaysTheEndIsUnrecorded: a session ends while the store refuses to record ends
// (as SQLite refuses writes on a full disk). Its supervisor keeps retrying; meanwhile get and list
// print the session as the store has it (running) and exit 2 saying it ended, how, and why that
// is not recorded. Once the store takes writes again the supervisor records the end and get
// exits 0.
func TestRunnerGetSaysTheEndIsUnrecorded(t *testing.T) {
	dir := runnerFleet(t, trivialFleet, map[string]string{"scripts/work.sh": "#!/bin/sh\nexit 3\n"})
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := sql.Open("sqlite", local.DBPath(dir)+"?_pragma=busy_timeout(10000)") // it waits for the runner's writes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	unjam := func() { _, _ = db.Exec(`DROP TRIGGER IF EXISTS test_jam`) }
	t.Cleanup(unjam)
	if _, err := db.Exec(`CREATE TRIGGER test_jam BEFORE UPDATE ON sessions
		WHEN NEW.status IN ('done', 'failed', 'cancelled') AND OLD.status IN ('running', 'paused')
		BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", "worker")
	if code != 0 {
		t.Fatalf("launch: %d %s", code, errOut)
	}
	id := strings.Fields(out)[0]
	var got string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, errOut, code = cli(t, nil, "runner", "--dir", dir, "get", id)
		if code != 0 {
			got = errOut
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get never said the end is unrecorded:\n%s", out)
		}
	}
	if code != 2 || !strings.Contains(out, "status:    running") ||
		!strings.Contains(got, "session "+id+" ended failed (exit status 3)") || !strings.Contains(got, "database or disk is full") {
		t.Fatalf("get: exit %d\n%s\n%s", code, out, got)
	}
	out, errOut, code = cli(t, nil, "runner", "--dir", dir, "list")
	if code != 2 || !strings.Contains(out, id) || !strings.Contains(errOut, "session "+id+" ended failed") {
		t.Fatalf("list: exit %d\n%s\n%s", code, out, errOut)
	}
	unjam()
	waitStore(t, st, id, "its end recorded", func(s store.Session, _ []store.Event) bool { return s.Status == ir.Failed })
	if out, errOut, code = cli(t, nil, "runner", "--dir", dir, "get", id); code != 0 || !strings.Contains(out, "exit status 3") {
		t.Fatalf("get once recorded: exit %d\n%s\n%s", code, out, errOut)
	}
}
