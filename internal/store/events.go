package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Event is one line of the audit log: a denial, a deferral, a transition.
type Event struct {
	Seq     int64
	At      time.Time // UTC
	Session string    // "" when about no session
	Actor   string
	Kind    string // e.g. "launched", "ended", "denied", "deferred", "orphaned"
	Message string
}

// Log appends e to the audit log, at now when e.At is zero; e.Seq is ignored, the log numbers
// its lines itself.
func (tx *Tx) Log(e Event) error {
	_, err := tx.LogSeq(e)
	return err
}

// LogSeq appends e to the audit log as Log does, and returns the number the log gave it.
func (tx *Tx) LogSeq(e Event) (int64, error) {
	if e.At.IsZero() {
		e.At = now()
	}
	res, err := tx.exec(`INSERT INTO events (at, session, actor, kind, message) VALUES (?, ?, ?, ?, ?)`,
		e.At.UnixNano(), e.Session, e.Actor, e.Kind, e.Message)
	if err != nil {
		return 0, fmt.Errorf("logging a %q event: %w", e.Kind, err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("logging a %q event: %w", e.Kind, err)
	}
	return seq, nil
}

// LogAll appends es to the audit log in their order, as Log does one by one, with one statement
// per batch of rows: what a tick that defers a thousand triggers logs.
func (tx *Tx) LogAll(es []Event) error {
	return batches(len(es), func(lo, hi int) error {
		args := make([]any, 0, 5*(hi-lo))
		for _, e := range es[lo:hi] {
			if e.At.IsZero() {
				e.At = now()
			}
			args = append(args, e.At.UnixNano(), e.Session, e.Actor, e.Kind, e.Message)
		}
		if _, err := tx.exec(`INSERT INTO events (at, session, actor, kind, message) VALUES `+rowsOf(5, hi-lo), args...); err != nil {
			return fmt.Errorf("logging %d %q events: %w", hi-lo, es[lo].Kind, err)
		}
		return nil
	})
}

// rowBatch is the most rows one statement of LogAll or SetPendingAll inserts: a few distinct
// statements, each compiled once per connection, and far below SQLite's limit of bound values.
const rowBatch = 64

// batches calls insert on consecutive ranges [lo, hi) of [0, n), each at most rowBatch long.
func batches(n int, insert func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += rowBatch {
		if err := insert(lo, min(lo+rowBatch, n)); err != nil {
			return err
		}
	}
	return nil
}

// rowsOf is the VALUES list of n rows of cols placeholders each: "(?, ?), (?, ?)".
func rowsOf(cols, n int) string {
	row := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return row + strings.Repeat(", "+row, n-1)
}

// CountEvents is how many events of kind the audit log holds about session.
func (tx *Tx) CountEvents(session, kind string) (int, error) {
	var n int
	if err := tx.queryRow(`SELECT count(*) FROM events WHERE session = ? AND kind = ?`, session, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the %q events of session %s: %w", kind, session, err)
	}
	return n, nil
}

// Events returns the most recent limit events (0: all) about session ("" for every event),
// oldest first.
func (st *Store) Events(ctx context.Context, session string, limit int) ([]Event, error) {
	q, args := `SELECT seq, at, session, actor, kind, message FROM events`, []any(nil)
	if session != "" {
		q, args = q+` WHERE session = ?`, append(args, session)
	}
	q += ` ORDER BY seq DESC`
	if limit > 0 {
		q, args = q+` LIMIT ?`, append(args, limit)
	}
	rows, err := st.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	es, err := scanEvents(rows)
	slices.Reverse(es)
	return es, err
}

// EventsAfter returns the events about session numbered after seq, oldest first, at most limit
// of them (limit > 0).
func (st *Store) EventsAfter(ctx context.Context, session string, seq int64, limit int) ([]Event, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT seq, at, session, actor, kind, message FROM events WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?`, session, seq, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return scanEvents(rows)
}

// scanEvents reads rows of (seq, at, session, actor, kind, message), and closes them.
func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var es []Event
	for rows.Next() {
		var e Event
		var at int64
		if err := rows.Scan(&e.Seq, &at, &e.Session, &e.Actor, &e.Kind, &e.Message); err != nil {
			return nil, fmt.Errorf("reading the audit log: %w", err)
		}
		e.At = fromNanos(at)
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return es, nil
}

// Meta returns the value stored under key; ok is false when there is none.
func (tx *Tx) Meta(key string) (value string, ok bool, err error) {
	err = tx.queryRow(`SELECT value FROM meta WHERE key = ?`, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading meta %q: %w", key, err)
	}
	return value, true, nil
}

// SetMeta stores value under key. The instance tag, under "tag", cannot be set.
func (tx *Tx) SetMeta(key, value string) error {
	if key == tagKey {
		return fmt.Errorf("meta %q is the instance tag, fixed when the database was created", key)
	}
	_, err := tx.exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("writing meta %q: %w", key, err)
	}
	return nil
}

// MetaPrefix returns the keys and values stored under keys that start with prefix, in key order.
func (tx *Tx) MetaPrefix(prefix string) (keys, values []string, err error) {
	// substr and length count characters alike: no LIKE pattern to escape.
	rows, err := tx.query(`SELECT key, value FROM meta WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key`, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("reading meta %q…: %w", prefix, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, nil, fmt.Errorf("reading meta %q…: %w", prefix, err)
		}
		keys, values = append(keys, k), append(values, v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading meta %q…: %w", prefix, err)
	}
	return keys, values, nil
}

// DeleteMeta drops key, if it is stored. The instance tag, under "tag", cannot be dropped.
func (tx *Tx) DeleteMeta(key string) error {
	if key == tagKey {
		return fmt.Errorf("meta %q is the instance tag, fixed when the database was created", key)
	}
	if _, err := tx.exec(`DELETE FROM meta WHERE key = ?`, key); err != nil {
		return fmt.Errorf("dropping meta %q: %w", key, err)
	}
	return nil
}

// Pending returns the pending schedule firings: since when each key has been due.
func (tx *Tx) Pending() (map[string]time.Time, error) {
	rows, err := tx.query(`SELECT key, since FROM pending`)
	if err != nil {
		return nil, fmt.Errorf("reading the pending firings: %w", err)
	}
	defer rows.Close()
	m := map[string]time.Time{}
	for rows.Next() {
		var key string
		var since int64
		if err := rows.Scan(&key, &since); err != nil {
			return nil, fmt.Errorf("reading the pending firings: %w", err)
		}
		m[key] = fromNanos(since)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the pending firings: %w", err)
	}
	return m, nil
}

// SetPending records that key has been due since since. A key already pending keeps the earlier
// of the two times: a firing deferred again is still as late as when it was first due.
func (tx *Tx) SetPending(key string, since time.Time) error {
	_, err := tx.exec(`INSERT INTO pending (key, since) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET since = min(since, excluded.since)`, key, nanos(since))
	if err != nil {
		return fmt.Errorf("recording pending firing %q: %w", key, err)
	}
	return nil
}

// SetPendingAll is SetPending for each pending firing, in one statement per batch of rows.
func (tx *Tx) SetPendingAll(ps []PendingFiring) error {
	return batches(len(ps), func(lo, hi int) error {
		args := make([]any, 0, 2*(hi-lo))
		for _, p := range ps[lo:hi] {
			args = append(args, p.Key, nanos(p.Since))
		}
		if _, err := tx.exec(`INSERT INTO pending (key, since) VALUES `+rowsOf(2, hi-lo)+` ON CONFLICT (key) DO UPDATE SET since = min(since, excluded.since)`, args...); err != nil {
			return fmt.Errorf("recording %d pending firings: %w", hi-lo, err)
		}
		return nil
	})
}

// PendingFiring is a firing deferred since Since: its cron entry's key.
type PendingFiring struct {
	Key   string
	Since time.Time
}

// ClearPending forgets the pending firing key, if any.
func (tx *Tx) ClearPending(key string) error {
	if _, err := tx.exec(`DELETE FROM pending WHERE key = ?`, key); err != nil {
		return fmt.Errorf("clearing pending firing %q: %w", key, err)
	}
	return nil
}
