package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
)

// migration is one step of the schema's history. Step i (from 0) brings a database from
// user_version i to i+1; a released step never changes, since files in the field already ran it.
type migration struct {
	// what names the step in the error when it fails.
	what string
	up   func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema's history, oldest first; its length is the version this build writes.
var migrations = []migration{
	// 1: sessions, the audit log, the schedule's pending firings, and the instance tag.
	{"create the schema", createSchema},
	// 2: stop_by, the deadline of a stop under way, so that the KILL after the grace period is
	// not lost with the process that sent the TERM.
	{"add the stop deadline", addStopBy},
	// 3: the paused runs of workflow playbooks, each under the hash of its resume token.
	{"add the workflow pauses", addPauses},
	// 4: the model usage of each agent session, as its model proxy counted it (usage.go).
	{"add the model usage", addUsage},
	// 5: the code flow's proposals and the throttles (pauses of the fleet and of work items).
	{"add the proposals and the throttles", addProposals},
	// 6: saved_head, the commit an isolated session's commits were saved at, so that what it
	// proposes is that commit, and not whatever its branch was moved to after.
	{"add the saved head", addSavedHead},
}

// schemaVersion is the user_version of a database this build has brought up to date.
var schemaVersion = len(migrations)

// tagKey is the meta key of the instance tag. The tag is fixed at creation: every session id
// carries it, so changing it would orphan them all.
const tagKey = "tag"

const schemaV1 = `
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
	seq              INTEGER PRIMARY KEY AUTOINCREMENT,
	id               TEXT UNIQUE,
	actor            TEXT NOT NULL,
	kind             TEXT NOT NULL,
	status           TEXT NOT NULL CHECK (status IN ('running', 'paused', 'cancelled', 'done', 'failed')),
	ref              TEXT NOT NULL DEFAULT '',
	params           TEXT NOT NULL DEFAULT '{}' CHECK (json_type(params) = 'object'),
	trigger_kind     TEXT NOT NULL DEFAULT '',
	origin           TEXT NOT NULL DEFAULT '',
	branch           TEXT NOT NULL DEFAULT '',
	workdir          TEXT NOT NULL DEFAULT '',
	worktree         INTEGER NOT NULL DEFAULT 0 CHECK (worktree IN (0, 1)),
	log_path         TEXT NOT NULL DEFAULT '',
	timeout_ns       INTEGER NOT NULL DEFAULT 0,
	supervisor_pid   INTEGER NOT NULL DEFAULT 0,
	supervisor_start INTEGER NOT NULL DEFAULT 0,
	pid              INTEGER NOT NULL DEFAULT 0,
	pid_start        INTEGER NOT NULL DEFAULT 0,
	created_at       INTEGER NOT NULL,
	started_at       INTEGER,
	ended_at         INTEGER,
	exit_code        INTEGER,
	reason           TEXT NOT NULL DEFAULT '',
	verified         TEXT NOT NULL DEFAULT '',
	token_hash       TEXT NOT NULL DEFAULT '',
	evidence         TEXT NOT NULL DEFAULT '',
	resolved_by      TEXT NOT NULL DEFAULT ''
) STRICT;

-- The sessions in flight are a handful among every session ever run: this index holds only
-- them, so listing or counting them costs the same after a hundred thousand sessions as after ten.
CREATE INDEX sessions_in_flight ON sessions (actor) WHERE status IN ('running', 'paused');
CREATE INDEX sessions_by_actor ON sessions (actor, seq);

CREATE TABLE events (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	at      INTEGER NOT NULL,
	session TEXT NOT NULL DEFAULT '',
	actor   TEXT NOT NULL DEFAULT '',
	kind    TEXT NOT NULL DEFAULT '',
	message TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX events_by_session ON events (session, seq);

CREATE TABLE pending (
	key   TEXT PRIMARY KEY,
	since INTEGER NOT NULL
) STRICT;
`

// createSchema is migration 1. It also draws the instance tag, here rather than at first use,
// so that the one process that creates the file is the one that names it.
func createSchema(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, schemaV1); err != nil {
		return err
	}
	tag, err := newTag()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)`, tagKey, tag)
	return err
}

// schemaV2 adds stop_by: when a session's process group got TERM (cancelled, or stopped by
// reconciliation at its timeout), the time at which whatever is left of it gets KILL; 0 when no
// stop is under way. The partial index holds only the few sessions whose stop is pending.
const schemaV2 = `
ALTER TABLE sessions ADD COLUMN stop_by INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_stopping ON sessions (stop_by) WHERE stop_by <> 0;
`

// addSavedHead is migration 6.
func addSavedHead(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `ALTER TABLE sessions ADD COLUMN saved_head TEXT NOT NULL DEFAULT ''`)
	return err
}

// addStopBy is migration 2.
func addStopBy(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schemaV2)
	return err
}

// newTag draws a random instance tag: 4 lowercase base32 characters, 20 bits, enough that a
// database recreated in the same place almost surely does not hand out its predecessor's ids.
func newTag() (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing the instance tag: %w", err)
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))[:4], nil
}

// validTag reports whether t has the shape newTag draws.
func validTag(t string) bool {
	if len(t) != 4 {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// setUp readies the database for use: it refuses a file that is not ours or is too new, migrates
// the schema, turns the file to WAL and reads the instance tag.
//
// Every read it decides on comes from one transaction, so that another process's migration
// cannot commit between them: read apart, a user_version of 0 followed by a table count taken
// after that migration makes a fresh file look like someone else's. A database already up to date
// costs only a read transaction; anything else is done in one BEGIN IMMEDIATE transaction, which
// holds the write lock from its first read, and a refusal rolls it back, leaving the file as it was.
func (st *Store) setUp(ctx context.Context) error {
	if ok, err := st.ready(ctx); err != nil || ok {
		return err
	}
	tx, err := st.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock in the DSN)
	if err != nil {
		return st.openError(err)
	}
	defer tx.Rollback()
	v, err := userVersion(ctx, tx)
	if err != nil {
		return st.openError(err)
	}
	if v > schemaVersion {
		return st.newerError(v)
	}
	if v == 0 {
		if err := st.checkUnclaimed(ctx, tx); err != nil {
			return err
		}
	}
	if err := st.migrate(ctx, tx, v); err != nil {
		return err
	}
	if err := st.readTag(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrating %s to schema version %d: %w", st.path, schemaVersion, err)
	}
	// journal_mode cannot change inside a transaction; the file is known to be ours by now.
	var mode string
	if err := st.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return st.openError(err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("%s cannot be put in WAL mode (it stays %q): is it on a network file system?", st.path, mode)
	}
	return nil
}

// ready reads, in one read transaction, whether the database is already up to date and in WAL
// mode, and its tag if so: what every Open but the first of a file finds.
func (st *Store) ready(ctx context.Context) (bool, error) {
	tx, err := st.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a plain (deferred) BEGIN
	if err != nil {
		return false, st.openError(err)
	}
	defer tx.Rollback()
	v, err := userVersion(ctx, tx)
	if err != nil {
		return false, st.openError(err)
	}
	if v > schemaVersion {
		return false, st.newerError(v)
	}
	if v < schemaVersion {
		return false, nil
	}
	var mode string
	if err := tx.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return false, st.openError(err)
	}
	if !strings.EqualFold(mode, "wal") {
		return false, nil
	}
	return true, st.readTag(ctx, tx)
}

// readTag reads the instance tag and checks its shape.
func (st *Store) readTag(ctx context.Context, q querier) error {
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, tagKey).Scan(&st.tag)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st.openError(err)
	}
	if !validTag(st.tag) {
		return fmt.Errorf("%s has no valid instance tag (%q): the database is damaged", st.path, st.tag)
	}
	return nil
}

// checkUnclaimed refuses a database at user_version 0 that has tables: a file some other program
// wrote is not ours to add tables to.
func (st *Store) checkUnclaimed(ctx context.Context, q querier) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		return st.openError(err)
	}
	if n > 0 {
		return fmt.Errorf("%s is an SQLite database that autonomy did not create (it has tables but no schema version): move it away", st.path)
	}
	return nil
}

// migrate runs, inside setUp's transaction, the steps that bring a database from version v up to
// schemaVersion.
func (st *Store) migrate(ctx context.Context, tx *sql.Tx, v int) error {
	if v == schemaVersion {
		return nil
	}
	for i := v; i < schemaVersion; i++ {
		if err := migrations[i].up(ctx, tx); err != nil {
			return fmt.Errorf("migrating %s to schema version %d (%s): %w", st.path, i+1, migrations[i].what, err)
		}
	}
	// PRAGMA takes no parameters; the version is this build's own constant.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("migrating %s: setting the schema version: %w", st.path, err)
	}
	return nil
}

func userVersion(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

func (st *Store) newerError(v int) error {
	return fmt.Errorf("%s has schema version %d, written by a newer autonomy: upgrade (this build reads up to version %d)", st.path, v, schemaVersion)
}

// schemaV3 adds the paused workflow runs (playbook/engine): the state a resume continues from,
// under the SHA-256 of its resume token (the token itself is never stored). session is the local
// session the run belongs to, "" for a run started by autonomy playbook run.
const schemaV3 = `
CREATE TABLE pauses (
	token_hash TEXT PRIMARY KEY,
	session    TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	state      BLOB NOT NULL
) STRICT;
CREATE INDEX pauses_by_session ON pauses (session) WHERE session <> '';
`

// addPauses is migration 3.
func addPauses(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schemaV3)
	return err
}
