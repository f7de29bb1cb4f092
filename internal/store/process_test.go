package store

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

// The environment of a helper process: what it does, on which database, and the file whose
// appearance starts it.
const (
	helperEnv   = "STORE_TEST_HELPER"
	helperDB    = "STORE_TEST_DB"
	helperStart = "STORE_TEST_START"
)

// perHelper is how many sessions each inserting helper writes.
const perHelper = 25

// TestHelperProcess is not a test: it is the body of the processes the tests below start, by
// running the test binary again with helperEnv set.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	var err error
	switch mode {
	case "insert":
		err = helperInsert()
	case "churn":
		err = helperChurn()
	case "open":
		err = helperOpen()
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helperInsert waits for the start signal, so that every helper opens the fresh file at the same
// moment, then inserts perHelper sessions, one transaction each.
func helperInsert() error {
	if err := awaitStart(); err != nil {
		return err
	}
	st, err := Open(os.Getenv(helperDB))
	if err != nil {
		return err
	}
	defer st.Close()
	for i := 0; i < perHelper; i++ {
		err := st.Tx(ctx, func(tx *Tx) error {
			s := Session{Actor: "worker", Kind: "agent", Origin: "pid:" + strconv.Itoa(os.Getpid())}
			if _, err := tx.Active("agent"); err != nil {
				return err
			}
			if err := tx.Insert(&s); err != nil {
				return err
			}
			return tx.Log(Event{Session: s.ID, Actor: s.Actor, Kind: "launched"})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// freshPaths is how many fresh databases the opening helpers open, one after the other.
const freshPaths = 20

// helperOpen waits for the start signal, then opens each of freshPaths fresh databases under
// the directory helperDB names, from 4 goroutines at once (each Store is a connection pool of its
// own, as another process's is), in the same order as every other helper.
func helperOpen() error {
	if err := awaitStart(); err != nil {
		return err
	}
	errs := make(chan error, 4*freshPaths)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range freshPaths {
				st, err := Open(filepath.Join(os.Getenv(helperDB), strconv.Itoa(i), "state.db"))
				if err != nil {
					errs <- err
					continue
				}
				if st.tag == "" {
					errs <- fmt.Errorf("fresh database %d: no tag", i)
				}
				st.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// awaitStart waits for the file helperStart names to appear.
func awaitStart() error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(os.Getenv(helperStart)); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("never told to start")
		}
	}
}

// helperChurn writes until it is killed: sessions inserted, modified and ended, events, pending
// firings, from two goroutines, as a serve loop and its supervisors would.
func helperChurn() error {
	st, err := Open(os.Getenv(helperDB))
	if err != nil {
		return err
	}
	errs := make(chan error, 2)
	for g := 0; g < 2; g++ {
		go func() {
			for i := 0; ; i++ {
				err := st.Tx(ctx, func(tx *Tx) error {
					s := Session{Actor: "churn", Kind: "agent", Params: ir.LaunchParams{"I": strconv.Itoa(i)}}
					if err := tx.Insert(&s); err != nil {
						return err
					}
					if err := tx.SetPending("key", time.Now()); err != nil {
						return err
					}
					return tx.Log(Event{Session: s.ID, Kind: "launched"})
				})
				if err != nil {
					errs <- err
					return
				}
				ss, err := st.List(ctx, ListOptions{Actor: "churn"})
				if err != nil {
					errs <- err
					return
				}
				for _, s := range ss {
					_, _, err := st.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running}, func(m *Session) {
						m.Status, m.Reason = ir.Done, "churned"
						code := 0
						m.ExitCode = &code
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	return <-errs
}

// helper starts the test binary as a helper process of mode on the database path.
func helper(t *testing.T, mode, path, start string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDB+"="+path, helperStart+"="+start)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	const procs = 8
	dir := t.TempDir()
	path, start := filepath.Join(dir, "fresh", "state.db"), filepath.Join(dir, "go")
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range cmds {
		cmds[i], outs[i] = helper(t, "insert", path, start)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	st := openAt(t, path)
	ss, err := st.List(ctx, ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range ss {
		seen[s.ID] = true
	}
	if len(ss) != procs*perHelper || len(seen) != procs*perHelper {
		t.Errorf("%d sessions with %d distinct ids, want %d of each", len(ss), len(seen), procs*perHelper)
	}
	if evs, _ := st.Events(ctx, "", 0); len(evs) != procs*perHelper {
		t.Errorf("%d events, want %d", len(evs), procs*perHelper)
	}
	if err := st.Check(ctx); err != nil {
		t.Error(err)
	}
}

// TestConcurrentOpensOfAFreshFile opens fresh databases from 4 processes of 4 stores each at
// once: the first to migrate a file must never make another refuse it as a database autonomy did
// not create (it read user_version 0 before the migration committed, and the tables after).
func TestConcurrentOpensOfAFreshFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 4 processes")
	}
	dir := t.TempDir()
	start := filepath.Join(dir, "go")
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 4 {
		cmd, out := helper(t, "open", dir, start)
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	for i := range freshPaths {
		st := openAt(t, filepath.Join(dir, strconv.Itoa(i), "state.db"))
		if err := st.Check(ctx); err != nil {
			t.Errorf("fresh database %d: %v", i, err)
		}
	}
}

func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	for round := 0; round < 5; round++ {
		st := openAt(t, path)
		base := count(t, st)
		cmd, out := helper(t, "churn", path, "")
		for deadline := time.Now().Add(2 * time.Minute); count(t, st) < base+50; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: the helper wrote too little\n%s", round, out)
			}
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("round %d: the helper exited by itself\n%s", round, out)
		}
		st.Close()

		st = openAt(t, path)
		if err := st.Check(ctx); err != nil {
			t.Fatalf("round %d: after the kill: %v", round, err)
		}
		n := count(t, st)
		s := insert(t, st, Session{Actor: "after", Kind: "agent"})
		if s.Seq <= int64(n) || count(t, st) != n+1 {
			t.Errorf("round %d: insert after the kill: seq %d, %d rows before", round, s.Seq, n)
		}
		if _, ok, err := st.Modify(ctx, s.ID, nil, func(m *Session) { m.Status = ir.Cancelled }); !ok || err != nil {
			t.Errorf("round %d: modify after the kill: %v, %v", round, ok, err)
		}
		st.Close()
	}
}

// count is the number of sessions stored.
func count(t *testing.T, st *Store) int {
	t.Helper()
	var n int
	if err := st.db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
