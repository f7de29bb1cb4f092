package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

func TestReadsDoNotTakeTheWriteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st := openAt(t, path)
	other := openAt(t, path) // another process, as far as SQLite's locks go
	s := insert(t, st, Session{Actor: "a", Kind: "agent"})
	st.Log(ctx, Event{Kind: "x"})
	err := st.Tx(ctx, func(tx *Tx) error {
		if _, _, err := tx.Modify(s.ID, nil, func(m *Session) { m.Reason = "uncommitted" }); err != nil {
			return err
		}
		// Both stores read while this transaction holds the write lock, and see the last commit.
		for _, r := range []*Store{st, other} {
			got, ok, err := r.Get(ctx, s.ID)
			if err != nil || !ok || got.Reason != "" {
				t.Errorf("Get during a write = %+v, %v, %v", got, ok, err)
			}
			if ss, err := r.List(ctx, ListOptions{All: true}); err != nil || len(ss) != 1 {
				t.Errorf("List during a write = %d, %v", len(ss), err)
			}
			if _, err := r.Events(ctx, "", 0); err != nil {
				t.Errorf("Events during a write: %v", err)
			}
			if err := r.Check(ctx); err != nil {
				t.Errorf("Check during a write: %v", err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, other, s.ID); got.Reason != "uncommitted" {
		t.Errorf("the other store does not see the commit: %q", got.Reason)
	}
}

func TestCheckFindsViolations(t *testing.T) {
	st := openStore(t)
	a := insert(t, st, Session{Actor: "a", Kind: "agent"})
	b := insert(t, st, Session{Actor: "a", Kind: "agent"})
	insert(t, st, Session{Actor: "a", Kind: "agent"})
	d := insert(t, st, Session{Actor: "a", Kind: "agent"})
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE sessions SET stop_by = 1 WHERE id = '` + d.ID + `'`,
		`UPDATE sessions SET status = 'done', ended_at = NULL WHERE id = '` + a.ID + `'`,
		`UPDATE sessions SET id = '7-` + st.tag + `' WHERE id = '` + b.ID + `'`,
		`UPDATE sessions SET id = NULL WHERE seq = 3`,
	} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	err := st.Check(ctx)
	if err == nil {
		t.Fatal("Check passed a broken database")
	}
	for _, want := range []string{st.path, "ended without an end time: " + a.ID + " (done)", "#2 has id '7-" + st.tag + "'", "#3 has id NULL", "a stop under way while in flight: " + d.ID + " (running)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error lacks %q:\n%v", want, err)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()

	newer := filepath.Join(dir, "newer.db")
	st := openAt(t, newer)
	if _, err := st.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, err := Open(newer)
	if err == nil {
		t.Fatal("a database from a newer autonomy was opened")
	}
	for _, want := range []string{newer, "schema version 99", "written by a newer autonomy: upgrade", "up to version " + strconv.Itoa(schemaVersion)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	for name, data := range map[string]string{
		"short.db": "not a database",
		"text.db":  strings.Repeat("this is a text file, not SQLite at all\n", 200),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not an SQLite database") {
			t.Errorf("Open(%s) = %v, want it refused as not SQLite", name, err)
		}
		if b, _ := os.ReadFile(p); string(b) != data {
			t.Errorf("Open changed %s", name)
		}
	}

	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE sessions (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(foreign); err == nil || !strings.Contains(err.Error(), foreign) || !strings.Contains(err.Error(), "autonomy did not create") {
		t.Errorf("Open(foreign SQLite file) = %v", err)
	}
	// Refused, the file is left as it was: still in rollback-journal mode (header bytes 18 and
	// 19 are 2 in WAL mode).
	if b, err := os.ReadFile(foreign); err != nil || len(b) < 100 || b[18] != 1 || b[19] != 1 {
		t.Errorf("Open changed the foreign database's journal mode (%d bytes, %v)", len(b), err)
	}
}

func TestOpenCreatesItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b?c#d%e")
	st := openAt(t, filepath.Join(dir, "state.db"))
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		t.Errorf("the database is not where asked: %v", err)
	}
	var mode string
	var busy, sync, fk int
	for q, dst := range map[string]any{"journal_mode": &mode, "busy_timeout": &busy, "synchronous": &sync, "foreign_keys": &fk} {
		if err := st.db.QueryRow("PRAGMA " + q).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	if mode != "wal" || busy < 10000 || sync != 1 || fk != 1 {
		t.Errorf("journal_mode %s busy_timeout %d synchronous %d foreign_keys %d", mode, busy, sync, fk)
	}
}

// TestMigrationSteps adds a step to the schema's history, as a later build would, and opens a
// database of the current version with it: from several stores at once the step runs exactly
// once, and a failing step leaves the database as it was.
func TestMigrationSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st := openAt(t, path)
	old := insert(t, st, Session{Actor: "a", Kind: "agent"})
	st.Close()

	saved := migrations
	t.Cleanup(func() { migrations, schemaVersion = saved, len(saved) })
	setSteps := func(steps ...migration) {
		migrations = append(slices.Clip(saved), steps...)
		schemaVersion = len(migrations)
	}

	setSteps(migration{"fail", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE half_done (x)`); err != nil {
			return err
		}
		return errors.New("step failed")
	}})
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "schema version "+strconv.Itoa(len(saved)+1)+" (fail): step failed") {
		t.Fatalf("Open with a failing step = %v", err)
	}

	// Insert a meta row no second run could insert again.
	setSteps(migration{"add a note", func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('note', 'v2')`)
		return err
	}})
	const stores = 4
	errs := make(chan error, stores)
	opened := make(chan *Store, stores)
	for i := 0; i < stores; i++ {
		go func() {
			st, err := Open(path)
			errs <- err
			opened <- st
		}()
	}
	for i := 0; i < stores; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
		if st := <-opened; st != nil {
			t.Cleanup(func() { st.Close() })
		}
	}
	st = openAt(t, path)
	var v, halfDone int
	var note string
	st.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	st.db.QueryRow(`SELECT value FROM meta WHERE key = 'note'`).Scan(&note)
	st.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'`).Scan(&halfDone)
	if v != len(saved)+1 || note != "v2" || halfDone != 0 {
		t.Errorf("after migrating: user_version %d, note %q, half_done tables %d", v, note, halfDone)
	}
	if got := get(t, st, old.ID); got.ID != old.ID {
		t.Errorf("the session before the migration is gone: %+v", got)
	}
	if err := st.Check(ctx); err != nil {
		t.Error(err)
	}
}

// TestMigrateV1: a database written by the first schema (no stop_by) opens, keeps its sessions,
// and gains the column and its index, with no stop under way.
func TestMigrateV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	saved := migrations
	migrations, schemaVersion = saved[:1], 1
	st, err := Open(path)
	migrations, schemaVersion = saved, len(saved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.Exec(`INSERT INTO sessions (id, actor, kind, status, created_at, pid) VALUES ('1-' || ?, 'a', 'agent', 'running', 1, 42)`, st.tag); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = openAt(t, path)
	s := get(t, st, "1-"+st.tag)
	if s.PID != 42 || !s.StopBy.IsZero() {
		t.Errorf("after migrating from version 1: %+v", s)
	}
	if ss, err := st.Stopping(ctx); err != nil || len(ss) != 0 {
		t.Errorf("Stopping after migrating = %v, %v", ss, err)
	}
	if err := st.Check(ctx); err != nil {
		t.Error(err)
	}
}

// TestStopping: a session with a stop under way is listed by Stopping, ended or not, until its
// StopBy is cleared; the time round-trips.
func TestStopping(t *testing.T) {
	st := openStore(t)
	a := insert(t, st, Session{Actor: "a", Kind: "agent"})
	insert(t, st, Session{Actor: "b", Kind: "agent"})
	by := time.Date(2026, 3, 2, 7, 0, 10, 123456789, time.UTC)
	m, ok, err := st.Modify(ctx, a.ID, nil, func(s *Session) { s.Status, s.StopBy = ir.Cancelled, by })
	if err != nil || !ok || !m.StopBy.Equal(by) {
		t.Fatalf("Modify = %+v, %v, %v", m, ok, err)
	}
	ss, err := st.Stopping(ctx)
	if err != nil || len(ss) != 1 || ss[0].ID != a.ID || !ss[0].StopBy.Equal(by) || ss[0].Status != ir.Cancelled {
		t.Fatalf("Stopping = %+v, %v", ss, err)
	}
	st.Modify(ctx, a.ID, nil, func(s *Session) { s.StopBy = time.Time{} })
	if ss, err := st.Stopping(ctx); err != nil || len(ss) != 0 {
		t.Errorf("Stopping after the stop = %+v, %v", ss, err)
	}
}
