package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// checkExamples bounds how many offending rows Check names per problem: enough to find them,
// not a flood.
const checkExamples = 5

// Check verifies the database: SQLite's own integrity check, then the store's invariants. Every
// ended session has an end time; no session in flight has a stop under way; every session id is its seq and the instance tag; no two
// sessions share an id. It reads one consistent snapshot without taking the write lock, and
// returns every problem found in one error.
func (st *Store) Check(ctx context.Context) error {
	tx, err := st.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("checking %s: %w", st.path, err)
	}
	defer tx.Rollback()
	c := &checker{ctx: ctx, tx: tx}

	c.lines("SQLite integrity check", `SELECT integrity_check FROM pragma_integrity_check WHERE integrity_check <> 'ok'`)
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		c.fail("reading the schema version: %v", err)
	} else if v != schemaVersion {
		c.fail("schema version %d, not %d", v, schemaVersion)
	}
	var tag string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, tagKey).Scan(&tag); err != nil {
		c.fail("reading the instance tag: %v", err)
	} else if !validTag(tag) || tag != st.tag {
		c.fail("instance tag %q, opened as %q", tag, st.tag)
	}
	c.lines("ended without an end time",
		`SELECT coalesce(id, '#' || seq) || ' (' || status || ')' FROM sessions
		 WHERE status IN ('cancelled', 'done', 'failed') AND coalesce(ended_at, 0) = 0 ORDER BY seq LIMIT ?`, checkExamples)
	// A stop is recorded with the end of a session, never before.
	c.lines("a stop under way while in flight",
		`SELECT id || ' (' || status || ')' FROM sessions INDEXED BY sessions_stopping
		 WHERE stop_by <> 0 AND status IN ('running', 'paused') ORDER BY seq LIMIT ?`, checkExamples)
	c.lines("id is not seq-tag",
		`SELECT '#' || seq || ' has id ' || quote(id) FROM sessions
		 WHERE id IS NULL OR id <> seq || '-' || ? ORDER BY seq LIMIT ?`, st.tag, checkExamples)
	// NOT INDEXED: the unique index is what is being doubted, so count from the table itself.
	c.lines("id shared by several sessions",
		`SELECT id || ' (' || count(*) || ' rows)' FROM sessions NOT INDEXED
		 WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1 ORDER BY id LIMIT ?`, checkExamples)
	if len(c.problems) > 0 {
		return fmt.Errorf("%s fails its check:\n  %s", st.path, strings.Join(c.problems, "\n  "))
	}
	return nil
}

// checker collects Check's problems.
type checker struct {
	ctx      context.Context
	tx       *sql.Tx
	problems []string
}

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// lines records, as problems of kind what, every row of the one-column query q.
func (c *checker) lines(what, q string, args ...any) {
	rows, err := c.tx.QueryContext(c.ctx, q, args...)
	if err != nil {
		c.fail("%s: %v", what, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			c.fail("%s: %v", what, err)
			return
		}
		c.fail("%s: %s", what, line)
	}
	if err := rows.Err(); err != nil {
		c.fail("%s: %v", what, err)
	}
}
