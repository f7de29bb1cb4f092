package store

import (
	"fmt"
	"os"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestStatementsCompileOncePerConnection: a process that reads and writes the same sessions again
// and again (a supervisor reads its session a dozen times) compiles each statement once, on its
// one connection. The driver compiled the text of every Exec and Query afresh: SQLite's parser
// was a tenth of a launch's CPU.
func TestStatementsCompileOncePerConnection(t *testing.T) {
	st := openStore(t)
	s := insert(t, st, Session{Actor: "worker", Kind: "agent", Params: ir.LaunchParams{"X": "1"}})
	round := func() {
		t.Helper()
		get(t, st, s.ID)
		if _, err := st.List(ctx, ListOptions{}); err != nil {
			t.Fatal(err)
		}
		err := st.Tx(ctx, func(tx *Tx) error {
			if _, err := tx.Active("agent"); err != nil {
				return err
			}
			_, _, err := tx.Modify(s.ID, nil, func(m *Session) { m.PID++ })
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Log(ctx, Event{Session: s.ID, Kind: "note", Message: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	round()
	first := st.Stats()
	for range 5 {
		round()
	}
	after := st.Stats()
	if after.Prepared != first.Prepared {
		t.Errorf("five more rounds of the same reads and writes compiled %d statements, want 0 (each was compiled in the first round)", after.Prepared-first.Prepared)
	}
	if after.Conns != 1 {
		t.Errorf("one goroutine's reads and writes opened %d connections, want 1 (each parses the whole schema)", after.Conns)
	}
	if got := after.Txs - first.Txs; got != 10 {
		t.Errorf("five rounds began %d transactions, want 10 (a Tx and a Log each)", got)
	}
	if got := after.Runs - first.Runs; got != 5*6 {
		t.Errorf("five rounds ran %d statements, want 30 (a Get, a List, a count, a Modify's read and write, a Log)", got)
	}
}

// TestStatementRunAgainInsideItsRows: a statement run again while the rows of its first run
// are still being read gets a compiled statement of its own; sharing the kept one would reset
// the first run's rows under its loop.
func TestStatementRunAgainInsideItsRows(t *testing.T) {
	st := openStore(t)
	for i := range 3 {
		insert(t, st, Session{Actor: fmt.Sprint("a", i), Kind: "agent"})
	}
	const q = `SELECT actor FROM sessions WHERE seq >= ? ORDER BY seq`
	var outer, inner []string
	err := st.Tx(ctx, func(tx *Tx) error {
		rows, err := tx.query(q, 0)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a); err != nil {
				return err
			}
			if err := tx.queryRow(q, 2).Scan(&b); err != nil {
				return err
			}
			outer, inner = append(outer, a), append(inner, b)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(outer) != "[a0 a1 a2]" || fmt.Sprint(inner) != "[a1 a1 a1]" {
		t.Errorf("outer rows %v, inner rows %v; want [a0 a1 a2] and [a1 a1 a1]", outer, inner)
	}
	// The kept statement is free again once the rows are closed.
	before := st.Stats().Prepared
	var a string
	if err := st.db.QueryRowContext(ctx, q, 0).Scan(&a); err != nil || a != "a0" {
		t.Fatalf("got %q, %v; want a0", a, err)
	}
	if n := st.Stats().Prepared - before; n != 0 {
		t.Errorf("running the statement again after its rows closed compiled it %d more times, want 0", n)
	}
}

// TestStatementCacheIsBounded: a connection keeps at most stmtCacheMax statements; past that a
// statement is compiled for each use, and the kept ones are still reused.
func TestStatementCacheIsBounded(t *testing.T) {
	st := openStore(t)
	const total = stmtCacheMax + 10
	run := func() int64 {
		before := st.Stats().Prepared
		for i := range total {
			var n int
			if err := st.db.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
				t.Fatalf("SELECT %d = %d, %v", i, n, err)
			}
		}
		return st.Stats().Prepared - before
	}
	keptBefore := kept(t, st)
	first := run()
	if k := kept(t, st); k != stmtCacheMax {
		t.Errorf("the connection keeps %d statements, want the bound, %d", k, stmtCacheMax)
	}
	if second, want := run(), first-int64(stmtCacheMax-keptBefore); second != want {
		t.Errorf("running %d distinct statements again compiled %d, want %d (those past the bound)", total, second, want)
	}
	if n := st.Stats().Conns; n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

// kept is the number of statements the store's (one) connection keeps compiled.
func kept(t *testing.T, st *Store) int {
	t.Helper()
	c, err := st.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.Raw(func(dc any) error { n = len(dc.(*cachingConn).stmts); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCloseLetsGoOfTheFile: closing the store closes the statements its connection keeps, so
// SQLite closes the connection for good: the last connection to a WAL database checkpoints it
// and removes its -wal file. A kept statement left open would leave the connection (and its
// file descriptors) open as a zombie.
func TestCloseLetsGoOfTheFile(t *testing.T) {
	path := t.TempDir() + "/state.db"
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := Session{Actor: "worker", Kind: "agent"}
	if err := st.Tx(ctx, func(tx *Tx) error { return tx.Insert(&s) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Get(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if st.Stats().Prepared == 0 {
		t.Fatal("nothing compiled")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("%s-wal is still there after Close (%v): the connection was not closed", path, err)
	}
}
