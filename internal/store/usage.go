package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
)

// Usage is what one session's model proxy counted (the generation requests, the tokens the API
// reported and their cost), with the session, its actor and when it was recorded.
type Usage struct {
	Session string    `json:"session,omitempty"`
	Actor   string    `json:"actor,omitempty"`
	At      time.Time `json:"at,omitzero"`
	modelproxy.Usage
}

// schemaV4 is the usage table: one row per agent session that ran behind a model proxy, kept
// with the session (written as it ends, or as it goes).
const schemaV4 = `
CREATE TABLE usage (
	session             TEXT PRIMARY KEY,
	actor               TEXT NOT NULL,
	at                  INTEGER NOT NULL,
	requests            INTEGER NOT NULL DEFAULT 0,
	input_tokens        INTEGER NOT NULL DEFAULT 0,
	cached_input_tokens INTEGER NOT NULL DEFAULT 0,
	output_tokens       INTEGER NOT NULL DEFAULT 0,
	cost_usd            REAL NOT NULL DEFAULT 0,
	estimated           INTEGER NOT NULL DEFAULT 0 CHECK (estimated IN (0, 1))
) STRICT;
CREATE INDEX usage_by_time ON usage (at);
`

// addUsage is migration 4.
func addUsage(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schemaV4)
	return err
}

// PutUsage records (or replaces) a session's usage.
func (st *Store) PutUsage(ctx context.Context, u Usage) error {
	if u.At.IsZero() {
		u.At = now()
	}
	est := 0
	if u.Estimated {
		est = 1
	}
	return st.Tx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO usage (session, actor, at, requests, input_tokens, cached_input_tokens, output_tokens, cost_usd, estimated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (session) DO UPDATE SET actor = excluded.actor, at = excluded.at, requests = excluded.requests,
				input_tokens = excluded.input_tokens, cached_input_tokens = excluded.cached_input_tokens,
				output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd, estimated = excluded.estimated`,
			u.Session, u.Actor, nanos(u.At), u.Requests, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD, est)
		if err != nil {
			return fmt.Errorf("recording the model usage of %s: %w", u.Session, err)
		}
		return nil
	})
}

// GetUsage returns a session's usage; ok is false for a session that used no model proxy.
func (st *Store) GetUsage(ctx context.Context, session string) (u Usage, ok bool, err error) {
	err = st.Tx(ctx, func(tx *Tx) error {
		var at int64
		var est int
		e := tx.queryRow(`SELECT session, actor, at, requests, input_tokens, cached_input_tokens, output_tokens, cost_usd, estimated
			FROM usage WHERE session = ?`, session).Scan(&u.Session, &u.Actor, &at, &u.Requests, &u.InputTokens,
			&u.CachedInputTokens, &u.OutputTokens, &u.CostUSD, &est)
		if errors.Is(e, sql.ErrNoRows) {
			return nil
		}
		if e != nil {
			return fmt.Errorf("reading the model usage of %s: %w", session, e)
		}
		u.At, u.Estimated, ok = fromNanos(at), est == 1, true
		return nil
	})
	return u, ok, err
}

// SumUsage sums the usage recorded at or after since (all of it when zero), of one actor's
// sessions when actor is not "". Session, Actor and At of the sum are left empty.
func (st *Store) SumUsage(ctx context.Context, since time.Time, actor string) (Usage, error) {
	var u Usage
	err := st.Tx(ctx, func(tx *Tx) error {
		var est int
		e := tx.queryRow(`SELECT COALESCE(SUM(requests), 0), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cached_input_tokens), 0),
			COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0), COALESCE(MAX(estimated), 0)
			FROM usage WHERE at >= ? AND (? = '' OR actor = ?)`, nanos(since), actor, actor).Scan(
			&u.Requests, &u.InputTokens, &u.CachedInputTokens, &u.OutputTokens, &u.CostUSD, &est)
		if e != nil {
			return fmt.Errorf("summing the model usage: %w", e)
		}
		u.Estimated = est == 1
		return nil
	})
	return u, err
}
