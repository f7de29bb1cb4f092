package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"modernc.org/sqlite"
)

// busyTimeout is how long a write waits for another process's write lock before it fails. A
// write transaction here lasts a millisecond or so; ten seconds is a pile-up, not a queue.
const busyTimeout = 10 * time.Second

// maxConns bounds the connection pool: one writer at a time (writeLock) and a few concurrent
// readers, which WAL lets run beside the writer.
const maxConns = 4

// SQLite's primary result codes that Open tells apart.
const (
	sqliteBusy   = 5  // SQLITE_BUSY: another connection holds a lock
	sqliteNotADB = 26 // SQLITE_NOTADB: the file has no SQLite header
)

// Store is an open database. It is safe for concurrent use by many goroutines, and its file by
// many processes.
type Store struct {
	db   *sql.DB
	path string
	tag  string
	// writeLock admits one write transaction of this process at a time, before it takes a
	// connection: writers queue here instead of polling SQLite's lock from pooled connections,
	// which would leave readers none.
	writeLock chan struct{}
	// writes counts the write transactions begun (Writes).
	writes atomic.Int64
	// stats counts the connections, compiled statements and transactions (Stats).
	stats counters
}

// querier is what both *sql.DB and *sql.Tx offer, so one read serves Store and Tx alike.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Open opens the database at path, creating it and its directory when missing and bringing its
// schema up to date. It refuses a file that is not SQLite, an SQLite file autonomy did not
// create, and a database a newer autonomy wrote.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("opening the database %s: %w", path, err)
	}
	if err := regularOrAbsent(abs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("opening the database %s: %w", abs, err)
	}
	// SQLite would create the file 0644; created empty here it is 0600 (an empty file is a new
	// database to SQLite), and SQLite gives its -wal and -shm files the database's mode.
	createPrivate(abs)
	base, err := sqlite.NewConnector(dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("opening the database %s: %w", abs, err)
	}
	st := &Store{path: abs, writeLock: make(chan struct{}, 1)}
	db := sql.OpenDB(&connector{base: base, stats: &st.stats})
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	st.db = db
	// Processes that open a fresh file together race to turn it to WAL, which takes an exclusive
	// lock; SQLite fails the losers at once rather than wait, since each holds the shared lock
	// the others wait for. So a busy set-up is retried, within the time a write would wait.
	for deadline := time.Now().Add(busyTimeout); ; {
		err = st.setUp(context.Background())
		if err == nil {
			return st, nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		time.Sleep(time.Duration(1+rand.IntN(10)) * time.Millisecond)
	}
}

// regularOrAbsent refuses a database path that names something other than a regular file (what a
// symbolic link points to counts): SQLite would read a device or a FIFO as a database and fail
// with "disk I/O error", or write to it.
func regularOrAbsent(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // absent (created), or SQLite says why it cannot be read
	}
	kind := "a special file"
	switch m := fi.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&os.ModeNamedPipe != 0:
		kind = "a FIFO"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m&os.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("the database %s is %s, not a regular file: give the path of a database file (it is created if missing)", path, kind)
}

// isBusy reports whether err is SQLite's SQLITE_BUSY, in any of its extended forms.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteBusy
}

// dsn is the driver's name for the database at the absolute path p. The per-connection pragmas
// ride in the DSN because the driver runs them on every connection it opens, and the pool opens
// connections at will; _txlock makes every read-write transaction BEGIN IMMEDIATE. WAL is not
// among them: it is a property of the file, set once by setUp when the file is known to be ours.
func dsn(p string) string {
	// A file: URI, so that a path holding '?' or '#' is a path; percent-escape what URIs reserve.
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(p))
	return "file:" + esc +
		"?_pragma=" + fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()) +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(1)" +
		"&_txlock=immediate"
}

// openError describes a failure to open or read the database, naming its path.
func (st *Store) openError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqliteNotADB {
		return fmt.Errorf("%s is not an SQLite database: move it away or point autonomy elsewhere (%v)", st.path, err)
	}
	return fmt.Errorf("opening the database %s: %w", st.path, err)
}

// Close closes the database once the reads and writes in progress have finished.
func (st *Store) Close() error { return st.db.Close() }

// Tx is one write transaction, handed to the function given to Store.Tx. Its methods use only
// the transaction's connection, so the function never waits for a second one. The connection
// compiles each statement once (cachingConn): a tick that defers a thousand firings runs the
// same few statements a thousand times.
type Tx struct {
	ctx context.Context
	tx  *sql.Tx
	st  *Store
}

func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	return tx.tx.ExecContext(tx.ctx, query, args...)
}

func (tx *Tx) query(query string, args ...any) (*sql.Rows, error) {
	return tx.tx.QueryContext(tx.ctx, query, args...)
}

func (tx *Tx) queryRow(query string, args ...any) *sql.Row {
	return tx.tx.QueryRowContext(tx.ctx, query, args...)
}

// Tx runs fn in one write transaction, which holds the database's write lock from its first
// statement: what fn reads stays true until it commits. The transaction commits when fn returns
// nil and rolls back when fn returns an error or panics (the panic goes on). Inside fn use only
// the *Tx: a Store method would wait for the lock fn holds.
func (st *Store) Tx(ctx context.Context, fn func(*Tx) error) error {
	if err := st.lock(ctx); err != nil {
		return err
	}
	defer st.unlock()
	st.writes.Add(1)
	stx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("beginning a write to %s: %w", st.path, err)
	}
	done := false
	defer func() {
		if !done {
			stx.Rollback()
		}
	}()
	if err := fn(&Tx{ctx: ctx, tx: stx, st: st}); err != nil {
		return err
	}
	done = true
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("committing a write to %s: %w", st.path, err)
	}
	return nil
}

// lock takes the process's write lock, waiting as long as SQLite would wait for another
// process's: a write queued that long behind this process's own is as stuck.
func (st *Store) lock(ctx context.Context) error {
	select {
	case st.writeLock <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(busyTimeout)
	defer t.Stop()
	select {
	case st.writeLock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("writing to %s: another write of this process held the lock for %s (a Store method called inside Store.Tx?)", st.path, busyTimeout)
	}
}

func (st *Store) unlock() { <-st.writeLock }

// Writes is how many write transactions this Store has begun: each takes the database's write
// lock, which every other process's writes wait for, so what a launch costs is counted in them
// (BenchmarkLaunch reports it per launch). A read never counts.
func (st *Store) Writes() int64 { return st.writes.Load() }

// Get returns the session id; ok is false when there is none.
func (st *Store) Get(ctx context.Context, id string) (Session, bool, error) {
	return getSession(ctx, st.db, id)
}

// Modify is Tx.Modify in a transaction of its own. ok is false whenever err is not nil: a
// change that did not commit did not happen.
func (st *Store) Modify(ctx context.Context, id string, from []ir.SessionStatus, fn func(*Session)) (Session, bool, error) {
	var s Session
	var ok bool
	err := st.Tx(ctx, func(tx *Tx) (err error) {
		s, ok, err = tx.Modify(id, from, fn)
		return err
	})
	if err != nil {
		return Session{}, false, err
	}
	return s, ok, nil
}

// Log is Tx.Log in a transaction of its own.
func (st *Store) Log(ctx context.Context, e Event) error {
	return st.Tx(ctx, func(tx *Tx) error { return tx.Log(e) })
}

// createPrivate creates path empty with mode 0600 if it does not exist, without ever opening it:
// closing a descriptor of the database file would drop every POSIX lock this process holds on it,
// including those of another Store of the same process (SQLite's own VFS works around that; a
// stray close of ours would not). So the file is made under a temporary name, closed, and linked
// into place, which fails harmlessly when the database exists.
func createPrivate(path string) {
	if _, err := os.Lstat(path); err == nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return // SQLite creates it, with its default mode
	}
	tmp := f.Name()
	f.Close()
	_ = os.Link(tmp, path)
	_ = os.Remove(tmp)
}
