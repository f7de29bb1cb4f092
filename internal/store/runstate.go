package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// PutState records (or replaces) the checkpoint of a run in progress under key, in the table of
// paused runs: a step playbook writes one before and after every step, so that a run killed
// mid-way continues at its next unfinished step. A key is never a token hash (those are hex;
// checkpoint keys carry a prefix with a colon).
func (st *Store) PutState(ctx context.Context, key, session string, state []byte) error {
	return st.Tx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO pauses (token_hash, session, created_at, state) VALUES (?, ?, ?, ?)
			ON CONFLICT (token_hash) DO UPDATE SET session = excluded.session, state = excluded.state`,
			key, session, nanos(now()), state)
		if err != nil {
			return fmt.Errorf("saving the checkpoint of a run: %w", err)
		}
		return nil
	})
}

// GetState returns the checkpoint recorded under key, if any, leaving it in place.
func (st *Store) GetState(ctx context.Context, key string) (state []byte, ok bool, err error) {
	err = st.Tx(ctx, func(tx *Tx) error {
		state, ok, err = tx.GetState(key)
		return err
	})
	return state, ok, err
}

// GetState is Store.GetState as this transaction sees it.
func (tx *Tx) GetState(key string) (state []byte, ok bool, err error) {
	e := tx.queryRow(`SELECT state FROM pauses WHERE token_hash = ?`, key).Scan(&state)
	switch {
	case errors.Is(e, sql.ErrNoRows):
		return nil, false, nil
	case e != nil:
		return nil, false, fmt.Errorf("reading the checkpoint of a run: %w", e)
	}
	return state, true, nil
}
