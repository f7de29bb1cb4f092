package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// FleetScope is the scope of the fleet-wide pause; ItemScope(ref) that of one work item's.
const FleetScope = "fleet"

// ItemScope is the throttle scope of the work item ref (a session's subject.ref).
func ItemScope(ref string) string { return "item:" + ref }

// Throttle is a pause in force: of the whole fleet (Scope FleetScope) or of one work item
// (ItemScope). While it stands no new session starts within its scope.
type Throttle struct {
	Scope  string    `json:"scope"`
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at"`
}

// SetThrottle records (or replaces) a pause.
func (st *Store) SetThrottle(ctx context.Context, t Throttle) error {
	return st.Tx(ctx, func(tx *Tx) error { return tx.SetThrottle(t) })
}

// SetThrottle is Store.SetThrottle inside a transaction.
func (tx *Tx) SetThrottle(t Throttle) error {
	if t.At.IsZero() {
		t.At = now()
	}
	_, err := tx.exec(`INSERT INTO throttles (scope, reason, by, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (scope) DO UPDATE SET reason = excluded.reason, by = excluded.by, at = excluded.at`,
		t.Scope, t.Reason, t.By, nanos(t.At))
	if err != nil {
		return fmt.Errorf("recording the pause of %s: %w", t.Scope, err)
	}
	return nil
}

// ClearThrottle lifts the pause of scope; it says whether there was one.
func (st *Store) ClearThrottle(ctx context.Context, scope string) (bool, error) {
	var n int64
	err := st.Tx(ctx, func(tx *Tx) error {
		res, err := tx.exec(`DELETE FROM throttles WHERE scope = ?`, scope)
		if err != nil {
			return fmt.Errorf("lifting the pause of %s: %w", scope, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// Throttle reads the pause of scope, if one stands.
func (tx *Tx) Throttle(scope string) (Throttle, bool, error) {
	t := Throttle{Scope: scope}
	var at int64
	err := tx.queryRow(`SELECT reason, by, at FROM throttles WHERE scope = ?`, scope).Scan(&t.Reason, &t.By, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Throttle{}, false, nil
	case err != nil:
		return Throttle{}, false, fmt.Errorf("reading the pause of %s: %w", scope, err)
	}
	t.At = fromNanos(at)
	return t, true, nil
}

// Throttles lists the pauses in force, the fleet's first, then the items' by scope.
func (st *Store) Throttles(ctx context.Context) ([]Throttle, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT scope, reason, by, at FROM throttles ORDER BY scope <> 'fleet', scope`)
	if err != nil {
		return nil, fmt.Errorf("listing the pauses: %w", err)
	}
	defer rows.Close()
	var out []Throttle
	for rows.Next() {
		var t Throttle
		var at int64
		if err := rows.Scan(&t.Scope, &t.Reason, &t.By, &at); err != nil {
			return nil, err
		}
		t.At = fromNanos(at)
		out = append(out, t)
	}
	return out, rows.Err()
}
