package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/ir"
)

// Session is one stored session: the Runner contract's fields plus what the local runner needs.
type Session struct {
	Seq    int64
	ID     string
	Actor  string
	Kind   string // "agent" or "human"
	Status ir.SessionStatus
	Ref    string
	Params ir.LaunchParams
	// Trigger is the trigger.kind the launch carried: "dispatch", "cron", ...
	Trigger string
	// Origin is who launched it: "operator", "schedule", or "session:<id>".
	Origin string
	Branch string
	// SavedHead is the commit the runner saved an isolated session's commits at, as Branch
	// (set together with it); "" otherwise.
	SavedHead string
	Workdir   string // where the process runs
	// Worktree says Workdir is a git worktree the runner created and removes.
	Worktree bool
	LogPath  string
	Timeout  time.Duration // 0: none
	// SupervisorPID and SupervisorStart name the supervisor process; the start time (field 22 of
	// /proc/PID/stat) tells it from a later process that reuses the pid.
	SupervisorPID   int
	SupervisorStart uint64
	// PID is the actor's process; its process group id is PID.
	PID      int
	PIDStart uint64
	// StopBy is set while a stop is under way: the group got TERM, and whatever is left of it at
	// StopBy gets KILL, from its supervisor or, if that died, from whichever runner reconciles
	// next. Zero when no stop is pending.
	StopBy time.Time
	// CreatedAt, StartedAt and EndedAt are in UTC; a zero time is unset.
	CreatedAt, StartedAt, EndedAt time.Time
	ExitCode                      *int
	Reason                        string // why it ended, or why it was deferred
	Verified                      string // how done was verified
	// TokenHash is, for a human session, the hex sha256 of the one-time redeem token; "" once
	// redeemed.
	TokenHash  string
	Evidence   string
	ResolvedBy string
}

// ListOptions narrows List.
type ListOptions struct {
	All   bool   // include ended sessions; otherwise only running and paused
	Actor string // only this actor's sessions ("" for all)
	// Limit keeps the most recent Limit sessions of those selected (0: no limit).
	Limit int
}

// The columns of sessions. mutableCols are those Modify writes back, in the order of
// mutableArgs; the others never change once a row is inserted.
const (
	mutableCols = "status, ref, params, trigger_kind, origin, branch, workdir, worktree, log_path, timeout_ns, " +
		"supervisor_pid, supervisor_start, pid, pid_start, started_at, ended_at, exit_code, " +
		"reason, verified, token_hash, evidence, resolved_by, stop_by, saved_head"
	sessionCols = "seq, id, actor, kind, created_at, " + mutableCols
)

// inFlightFrom and inFlightWhere select the running and paused sessions, through the partial
// index sessions_in_flight, whose condition inFlightWhere is. Without statistics SQLite's planner
// prefers scanning the whole table in seq order, or an actor's every session, to the few rows of
// the index; INDEXED BY makes it take the index, and fail loudly should the index ever stop
// matching the condition.
const (
	inFlightFrom  = "sessions INDEXED BY sessions_in_flight"
	inFlightWhere = "status IN ('running', 'paused')"
)

var (
	insertSQL = "INSERT INTO sessions (actor, kind, created_at, " + mutableCols + ") VALUES (?, ?, ?" +
		strings.Repeat(", ?", strings.Count(mutableCols, ",")+1) + ") RETURNING seq"
	updateSQL = "UPDATE sessions SET " + strings.ReplaceAll(mutableCols, ",", " = ?,") + " = ? WHERE seq = ?"
)

// Insert records s as a new session and fills in what the store assigns: Seq and ID, CreatedAt
// when zero (now), Status when empty (running), and EndedAt (now) when the status is final and
// it has none.
func (tx *Tx) Insert(s *Session) error {
	if s.Actor == "" {
		return errors.New("inserting a session: it has no actor")
	}
	if s.Status == "" {
		s.Status = ir.Running
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now()
	}
	if err := s.settle(); err != nil {
		return fmt.Errorf("inserting a session of %s: %w", s.Actor, err)
	}
	args, err := s.mutableArgs()
	if err != nil {
		return fmt.Errorf("inserting a session of %s: %w", s.Actor, err)
	}
	args = append([]any{s.Actor, s.Kind, nanos(s.CreatedAt)}, args...)
	var seq int64
	if err := tx.queryRow(insertSQL, args...).Scan(&seq); err != nil {
		return fmt.Errorf("inserting a session of %s: %w", s.Actor, err)
	}
	// The id needs the seq AUTOINCREMENT just assigned, hence a second statement; both commit or
	// neither does.
	id := fmt.Sprintf("%d-%s", seq, tx.st.tag)
	if _, err := tx.exec(`UPDATE sessions SET id = ? WHERE seq = ?`, id, seq); err != nil {
		return fmt.Errorf("inserting session %s: %w", id, err)
	}
	s.Seq, s.ID = seq, id
	return nil
}

// Get returns the session id as this transaction sees it; ok is false when there is none.
func (tx *Tx) Get(id string) (Session, bool, error) { return getSession(tx.ctx, tx.tx, id) }

// Active counts the running and paused sessions of kind ("" for every kind).
func (tx *Tx) Active(kind string) (int, error) {
	q, args := "SELECT count(*) FROM "+inFlightFrom+" WHERE "+inFlightWhere, []any(nil)
	if kind != "" {
		q, args = q+" AND kind = ?", append(args, kind)
	}
	return tx.count(q, args...)
}

// ActorActive counts the running and paused sessions of actor launched by origin ("" for any).
func (tx *Tx) ActorActive(actor, origin string) (int, error) {
	q, args := "SELECT count(*) FROM "+inFlightFrom+" WHERE "+inFlightWhere+" AND actor = ?", []any{actor}
	if origin != "" {
		q, args = q+" AND origin = ?", append(args, origin)
	}
	return tx.count(q, args...)
}

func (tx *Tx) count(q string, args ...any) (int, error) {
	var n int
	if err := tx.queryRow(q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting sessions in flight: %w", err)
	}
	return n, nil
}

// Modify changes the session id when its status is one of from (any status when from is empty):
// it calls fn on a copy of the row and writes every mutable field back, and returns the new
// session and true. Otherwise it writes nothing and returns the session as it is (the zero
// Session when there is none) and false. Seq, ID, Actor, Kind and CreatedAt never change: what
// fn sets them to is ignored. EndedAt is set to now when fn ends the session without it.
func (tx *Tx) Modify(id string, from []ir.SessionStatus, fn func(*Session)) (Session, bool, error) {
	cur, ok, err := tx.Get(id)
	if err != nil || !ok {
		return cur, false, err
	}
	if len(from) > 0 && !slices.Contains(from, cur.Status) {
		return cur, false, nil
	}
	n := cur
	fn(&n)
	n.Seq, n.ID, n.Actor, n.Kind, n.CreatedAt = cur.Seq, cur.ID, cur.Actor, cur.Kind, cur.CreatedAt
	if err := n.settle(); err != nil {
		return cur, false, fmt.Errorf("modifying session %s: %w", id, err)
	}
	args, err := n.mutableArgs()
	if err != nil {
		return cur, false, fmt.Errorf("modifying session %s: %w", id, err)
	}
	if _, err := tx.exec(updateSQL, append(args, n.Seq)...); err != nil {
		return cur, false, fmt.Errorf("modifying session %s: %w", id, err)
	}
	return n, true, nil
}

// List returns the sessions opts selects, oldest first.
func (st *Store) List(ctx context.Context, opts ListOptions) ([]Session, error) {
	from, where, args := "sessions", []string(nil), []any(nil)
	if !opts.All {
		from, where = inFlightFrom, append(where, inFlightWhere)
	}
	if opts.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, opts.Actor)
	}
	q := "SELECT " + sessionCols + " FROM " + from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if opts.Limit > 0 {
		q, args = q+" ORDER BY seq DESC LIMIT ?", append(args, opts.Limit)
	} else {
		q += " ORDER BY seq"
	}
	rows, err := st.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	defer rows.Close()
	var ss []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("listing sessions: %w", err)
		}
		ss = append(ss, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	if opts.Limit > 0 {
		slices.Reverse(ss)
	}
	return ss, nil
}

// Stopping returns the sessions whose stop is under way (StopBy set), oldest first: few, read
// through their partial index whatever the number of sessions stored.
func (st *Store) Stopping(ctx context.Context) ([]Session, error) {
	rows, err := st.db.QueryContext(ctx, "SELECT "+sessionCols+" FROM sessions INDEXED BY sessions_stopping WHERE stop_by <> 0 ORDER BY seq")
	if err != nil {
		return nil, fmt.Errorf("listing the sessions being stopped: %w", err)
	}
	defer rows.Close()
	var ss []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("listing the sessions being stopped: %w", err)
		}
		ss = append(ss, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the sessions being stopped: %w", err)
	}
	return ss, nil
}

func getSession(ctx context.Context, q querier, id string) (Session, bool, error) {
	s, err := scanSession(q.QueryRowContext(ctx, "SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, fmt.Errorf("reading session %s: %w", id, err)
	}
	return s, true, nil
}

// settle checks s and puts it in the form a read would return it in, so that what Insert and
// Modify hand back equals what Get returns next.
func (s *Session) settle() error {
	if !slices.Contains(ir.SessionStatuses, s.Status) {
		return fmt.Errorf("unknown status %q", s.Status)
	}
	if s.Status.Ended() && s.EndedAt.IsZero() {
		s.EndedAt = now() // Check holds every ended session to having an end
	}
	s.CreatedAt, s.StartedAt, s.EndedAt = fromNanos(nanos(s.CreatedAt)), fromNanos(nanos(s.StartedAt)), fromNanos(nanos(s.EndedAt))
	s.StopBy = fromNanos(nanos(s.StopBy))
	if len(s.Params) == 0 {
		s.Params = nil
	}
	if s.ExitCode != nil {
		c := *s.ExitCode
		s.ExitCode = &c
	}
	return nil
}

// mutableArgs are the values of mutableCols for s.
func (s *Session) mutableArgs() ([]any, error) {
	params, err := encodeParams(s.Params)
	if err != nil {
		return nil, err
	}
	var exit any
	if s.ExitCode != nil {
		exit = int64(*s.ExitCode)
	}
	worktree := int64(0)
	if s.Worktree {
		worktree = 1
	}
	return []any{
		string(s.Status), s.Ref, params, s.Trigger, s.Origin, s.Branch, s.Workdir, worktree, s.LogPath, int64(s.Timeout),
		int64(s.SupervisorPID), int64(s.SupervisorStart), int64(s.PID), int64(s.PIDStart),
		nullNanos(s.StartedAt), nullNanos(s.EndedAt), exit,
		s.Reason, s.Verified, s.TokenHash, s.Evidence, s.ResolvedBy, nanos(s.StopBy), s.SavedHead,
	}, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanSession reads one row of sessionCols.
func scanSession(sc scanner) (Session, error) {
	var (
		s                               Session
		id                              sql.NullString
		status, params                  string
		created, worktree, timeout      int64
		supPID, supStart, pid, pidStart int64
		started, ended, exit            sql.NullInt64
		stopBy                          int64
	)
	err := sc.Scan(&s.Seq, &id, &s.Actor, &s.Kind, &created,
		&status, &s.Ref, &params, &s.Trigger, &s.Origin, &s.Branch, &s.Workdir, &worktree, &s.LogPath, &timeout,
		&supPID, &supStart, &pid, &pidStart, &started, &ended, &exit,
		&s.Reason, &s.Verified, &s.TokenHash, &s.Evidence, &s.ResolvedBy, &stopBy, &s.SavedHead)
	if err != nil {
		return Session{}, err
	}
	s.ID, s.Status, s.Worktree, s.Timeout = id.String, ir.SessionStatus(status), worktree != 0, time.Duration(timeout)
	s.SupervisorPID, s.SupervisorStart, s.PID, s.PIDStart = int(supPID), uint64(supStart), int(pid), uint64(pidStart)
	s.CreatedAt, s.StartedAt, s.EndedAt = fromNanos(created), fromNanos(started.Int64), fromNanos(ended.Int64)
	s.StopBy = fromNanos(stopBy)
	if exit.Valid {
		c := int(exit.Int64)
		s.ExitCode = &c
	}
	if s.Params, err = decodeParams(params); err != nil {
		return Session{}, fmt.Errorf("session %s: %w", s.ID, err)
	}
	return s, nil
}

// encodeParams renders p as a JSON object. JSON strings are Unicode, and encoding/json would
// quietly replace bytes that are not UTF-8; a param it cannot keep verbatim is refused instead.
func encodeParams(p ir.LaunchParams) (string, error) {
	if len(p) == 0 {
		return "{}", nil
	}
	for k, v := range p {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return "", fmt.Errorf("param %q is not valid UTF-8, which the store cannot keep verbatim", k)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<", ">" and "&" legible to a person reading the file
	if err := enc.Encode(map[string]string(p)); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func decodeParams(raw string) (ir.LaunchParams, error) {
	if raw == "{}" || raw == "" {
		return nil, nil
	}
	var p ir.LaunchParams
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, fmt.Errorf("params are not a JSON object of strings: %w", err)
	}
	if len(p) == 0 {
		return nil, nil
	}
	return p, nil
}

// now is the store's clock, in UTC like every time it returns.
func now() time.Time { return time.Now().UTC() }

// nanos is t as stored: unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// nullNanos is t as stored in a column that may be NULL: NULL for the zero time.
func nullNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// fromNanos is the time stored as n, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
