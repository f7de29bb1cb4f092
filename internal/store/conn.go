package store

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync/atomic"
)

// stmtCacheMax bounds the statements one connection keeps compiled. The store's statements are
// built from constants (values are always bound, never spliced in), so they are a fixed set of
// a few dozen; past the bound a statement is compiled for its one use, as if there were no cache.
const stmtCacheMax = 128

// Stats counts what a Store asked of SQLite since it was opened. A launch runs two processes
// (the CLI and the session's supervisor), each with its own Store, so each pays its own: every
// connection parses the whole schema on its first statement, and every statement a connection
// has not run before is compiled (parsed and planned) once, then kept (stmtCacheMax).
type Stats struct {
	// Conns is the connections opened.
	Conns int64
	// Prepared is the statements compiled: the first run of each on each connection, and every
	// run of one the connection does not keep (stmtCacheMax, or the same statement run again
	// while its rows are still being read).
	Prepared int64
	// Txs is the transactions begun, read and write (Writes counts the write ones).
	Txs int64
	// Runs is the statements run, each read and each write.
	Runs int64
}

// Stats returns what this Store has asked of SQLite so far.
func (st *Store) Stats() Stats {
	return Stats{Conns: st.stats.conns.Load(), Prepared: st.stats.prepared.Load(), Txs: st.stats.txs.Load(), Runs: st.stats.runs.Load()}
}

// counters are a Store's Stats, shared with its connections.
type counters struct{ conns, prepared, txs, runs atomic.Int64 }

// connector opens the Store's connections through modernc's own connector (the driver
// registered as "sqlite", as sql.Open would), each wrapped so that it keeps the statements it
// compiles (cachingConn).
type connector struct {
	base  driver.Connector
	stats *counters
}

// Connect opens a connection: the driver runs the DSN's pragmas on it.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	raw, ok := dc.(rawConn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("the SQLite driver's connection (%T) lacks what the store uses of it", dc)
	}
	c.stats.conns.Add(1)
	return &cachingConn{raw: raw, stats: c.stats}, nil
}

// Driver is modernc's driver.
func (c *connector) Driver() driver.Driver { return c.base.Driver() }

// rawConn is what database/sql uses of modernc's connection.
type rawConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is one connection that compiles each statement once: the driver compiles the text
// of every Exec and Query afresh, and SQLite's parser was a tenth of a launch's CPU, mostly the
// same few statements compiled again and again (a supervisor reads its session a dozen times).
// database/sql uses a connection from one goroutine at a time, and its Rows hold the connection
// until they are closed, so the cache needs no lock; a cached statement whose rows are still
// open (the same statement run again inside the loop over its rows) is not handed out twice:
// that run gets a statement of its own.
type cachingConn struct {
	raw   rawConn
	stats *counters
	stmts map[string]*cachedStmt
}

// cachedStmt is a compiled statement a connection keeps; busy while it runs or its rows are open.
type cachedStmt struct {
	ds   driver.Stmt
	busy bool
}

// stmt returns the compiled statement for query and what to call when done with it: cached and
// marked busy until then, or compiled for this one use and closed then.
func (c *cachingConn) stmt(ctx context.Context, query string) (driver.Stmt, func(), error) {
	c.stats.runs.Add(1)
	if cs, ok := c.stmts[query]; ok && !cs.busy {
		cs.busy = true
		return cs.ds, func() { cs.busy = false }, nil
	}
	ds, err := c.raw.PrepareContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	c.stats.prepared.Add(1)
	if _, ok := c.stmts[query]; ok || len(c.stmts) >= stmtCacheMax {
		return ds, func() { ds.Close() }, nil
	}
	if c.stmts == nil {
		c.stmts = map[string]*cachedStmt{}
	}
	cs := &cachedStmt{ds: ds, busy: true}
	c.stmts[query] = cs
	return ds, func() { cs.busy = false }, nil
}

// ExecContext runs query with its compiled statement.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ds, done, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	defer done()
	ex, ok := ds.(driver.StmtExecContext)
	if !ok {
		return nil, fmt.Errorf("the SQLite driver's statement (%T) cannot run with a context", ds)
	}
	return ex.ExecContext(ctx, args)
}

// QueryContext runs query with its compiled statement, which stays busy until its rows close.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ds, done, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	q, ok := ds.(driver.StmtQueryContext)
	if !ok {
		done()
		return nil, fmt.Errorf("the SQLite driver's statement (%T) cannot run with a context", ds)
	}
	rows, err := q.QueryContext(ctx, args)
	if err != nil {
		done()
		return nil, err
	}
	return &doneRows{Rows: rows, done: done}, nil
}

// doneRows are a statement's rows; closing them lets go of the statement.
type doneRows struct {
	driver.Rows
	done func()
}

// Close closes the rows, then lets go of their statement.
func (r *doneRows) Close() error {
	err := r.Rows.Close()
	if r.done != nil {
		r.done()
		r.done = nil
	}
	return err
}

// PrepareContext compiles a statement database/sql keeps (sql.Stmt), which closes it.
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	ds, err := c.raw.PrepareContext(ctx, query)
	if err == nil {
		c.stats.prepared.Add(1)
	}
	return ds, err
}

// Prepare is PrepareContext without a context.
func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// BeginTx begins a transaction on the connection.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.stats.txs.Add(1)
	return c.raw.BeginTx(ctx, opts)
}

// Begin is BeginTx with the default options (database/sql calls BeginTx).
func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// Close closes the statements the connection keeps, then the connection: SQLite keeps a
// connection with statements left open alive (sqlite3_close_v2) until they are closed.
func (c *cachingConn) Close() error {
	for q, cs := range c.stmts {
		cs.ds.Close()
		delete(c.stmts, q)
	}
	return c.raw.Close()
}

// Ping is the driver's.
func (c *cachingConn) Ping(ctx context.Context) error { return c.raw.Ping(ctx) }

// ResetSession is the driver's: it refuses a connection an interrupted statement left unusable.
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.raw.ResetSession(ctx) }

// IsValid is the driver's.
func (c *cachingConn) IsValid() bool { return c.raw.IsValid() }
