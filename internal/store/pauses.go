package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SavePause records the state of a paused workflow run under the hash of its resume token.
func (st *Store) SavePause(ctx context.Context, tokenHash, session string, state []byte) error {
	return st.Tx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO pauses (token_hash, session, created_at, state) VALUES (?, ?, ?, ?)`,
			tokenHash, session, nanos(now()), state)
		if err != nil {
			return fmt.Errorf("saving a paused run: %w", err)
		}
		return nil
	})
}

// TakePause removes and returns the paused run recorded under tokenHash, in one transaction: a
// token is redeemed once, and two processes redeeming it at once cannot both get the state. A
// token with no paused run is told by a read, without a write transaction: a session's end asks
// whether it settles someone's review, and almost never does.
func (st *Store) TakePause(ctx context.Context, tokenHash string) (state []byte, session string, ok bool, err error) {
	var one int
	switch e := st.db.QueryRowContext(ctx, `SELECT 1 FROM pauses WHERE token_hash = ?`, tokenHash).Scan(&one); {
	case errors.Is(e, sql.ErrNoRows):
		return nil, "", false, nil
	case e != nil:
		return nil, "", false, fmt.Errorf("reading a paused run: %w", e)
	}
	err = st.Tx(ctx, func(tx *Tx) error {
		e := tx.queryRow(`DELETE FROM pauses WHERE token_hash = ? RETURNING state, session`, tokenHash).Scan(&state, &session)
		switch {
		case errors.Is(e, sql.ErrNoRows):
			return nil
		case e != nil:
			return fmt.Errorf("reading a paused run: %w", e)
		}
		ok = true
		return nil
	})
	return state, session, ok, err
}

// DropPauses forgets every paused run of session (cancelled or ended), so that no token of it
// can resume it any more.
func (st *Store) DropPauses(ctx context.Context, session string) error {
	return st.Tx(ctx, func(tx *Tx) error { return tx.DropPauses(session) })
}

// DropPauses is Store.DropPauses inside this transaction: with the session's end, in the same
// write.
func (tx *Tx) DropPauses(session string) error {
	_, err := tx.exec(`DELETE FROM pauses WHERE session = ?`, session)
	return err
}
