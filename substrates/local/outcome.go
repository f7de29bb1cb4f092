package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A supervisor that cannot write the store when its session ends (a full disk, a read-only state
// directory) tries again, with a backoff, for a bounded time (endRetryFor). Should the store stay
// unwritable, it writes the outcome to a small file beside the session's result (outcomes.path),
// which reconciliation reads to record the real outcome, saying that it was recorded late and
// why, instead of "exit status unknown". The file is reserved, filled with spaces, when the
// supervisor starts, and overwritten in place at the end: on a disk that filled up meanwhile,
// blocks already allocated can still be written.

// outcomes keeps the ends of sessions that the store could not take, in files beside their
// results, and writes an end to the store with retries (modifyEnd).
type outcomes struct {
	in    *Install
	store *store.Store
	// supervising says whether this process supervises a session: only its supervisor keeps
	// its outcome and retries.
	supervising func(id string) bool
	// retryFor and backoff bound how long, and how often, a supervisor tries again to record its
	// session's end in a store it cannot write.
	retryFor, backoff time.Duration
}

// Defaults of outcomes.retryFor and backoff.
const (
	defaultEndRetryFor = 2 * time.Minute
	defaultEndBackoff  = 100 * time.Millisecond
	maxEndBackoff      = 5 * time.Second
)

// outcomeSize is the size of the reserved outcome file; a reason that would not fit is cut.
const outcomeSize = 4096

// outcome is how a session ended, as its supervisor would have recorded it.
type outcome struct {
	Session  string           `json:"session"`
	Status   ir.SessionStatus `json:"status"`
	Reason   string           `json:"reason,omitempty"`
	Verified string           `json:"verified,omitempty"`
	ExitCode *int             `json:"exitCode,omitempty"`
	EndedAt  time.Time        `json:"endedAt"`
	// StoreError is why the store could not be written.
	StoreError string `json:"storeError"`
}

// path is the outcome file of session id.
func (oc *outcomes) path(id string) string {
	return oc.in.Path(StateDir + "/results/" + id + ".outcome.json")
}

// reserveOutcome makes the outcome file of session id, blank, while there is room for it.
func (oc *outcomes) reserve(id string) {
	_ = writeNew(oc.path(id), bytes.Repeat([]byte(" "), outcomeSize), 0o600)
}

// dropOutcome removes the outcome file of session id.
func (oc *outcomes) drop(id string) { _ = os.Remove(oc.path(id)) }

// settleOutcome, as its supervisor is done, removes the outcome file of session id unless it
// keeps an outcome the store could not take.
func (oc *outcomes) settle(id string) {
	if _, kept := oc.kept(id); !kept {
		oc.drop(id)
	}
}

// halve is the first half of s, cut at a character's start, and an ellipsis: shorter than s
// when s is longer than 8 bytes.
func halve(s string) string {
	n := len(s) / 2
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// keep writes o into the reserved outcome file in place (creating it if it is not there).
func (oc *outcomes) keep(o outcome) error {
	data, err := json.Marshal(o)
	// Each text is halved in turn until the outcome fits: the store's error and the evidence
	// first, then the reason; each cut makes a text shorter, so this ends.
	for err == nil && len(data) > outcomeSize {
		switch {
		case len(o.StoreError) > 64:
			o.StoreError = halve(o.StoreError)
		case len(o.Verified) > 64:
			o.Verified = halve(o.Verified)
		case len(o.Reason) > 64:
			o.Reason = halve(o.Reason)
		default:
			return fmt.Errorf("the outcome of %s does not fit in %d bytes", o.Session, outcomeSize)
		}
		data, err = json.Marshal(o)
	}
	if err != nil {
		return err
	}
	f, err := os.OpenFile(oc.path(o.Session), os.O_WRONLY|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	// Padded with spaces over the reserved bytes: the JSON decoder ignores them.
	if len(data) < outcomeSize {
		data = append(data, bytes.Repeat([]byte(" "), outcomeSize-len(data))...)
	}
	if _, err = f.WriteAt(data, 0); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// kept reads the outcome its supervisor could not record of session id, if any.
func (oc *outcomes) kept(id string) (outcome, bool) {
	var o outcome
	data, err := readCapped(oc.path(id), outcomeSize)
	if err != nil || len(bytes.TrimSpace(data)) == 0 || json.Unmarshal(data, &o) != nil {
		return o, false
	}
	return o, o.Session == id && o.Status.Ended()
}

// modifyEnd is Store.Modify for the end of a session, o, and then, in the same transaction when
// the session did end there, what goes with its end (the audit log's line). The supervisor of
// the session (this process) keeps o in the outcome file at the first failed write, then retries
// with a backoff for up to retryFor, and removes the kept outcome once a write succeeds; any
// other caller (reconciliation) tries once.
func (oc *outcomes) modifyEnd(ctx context.Context, o outcome, fn func(*store.Session), then func(*store.Tx, store.Session)) (store.Session, bool, error) {
	deadline := time.Now().Add(oc.retryFor)
	wait := oc.backoff
	kept := false
	for {
		var s store.Session
		var changed bool
		err := oc.store.Tx(ctx, func(tx *store.Tx) (err error) {
			s, changed, err = tx.Modify(o.Session, []ir.SessionStatus{ir.Running, ir.Paused}, fn)
			if err == nil && changed {
				then(tx, s)
			}
			return err
		})
		if err == nil {
			if kept {
				oc.drop(o.Session)
			}
			return s, changed, nil
		}
		supervising := oc.supervising(o.Session)
		if supervising && !kept {
			// Kept now, not after the retries: a supervisor killed meanwhile must not lose it.
			o.StoreError = err.Error()
			kept = oc.keep(o) == nil
		}
		if !supervising || !time.Now().Before(deadline) || ctx.Err() != nil {
			return store.Session{}, false, err
		}
		time.Sleep(min(wait, time.Until(deadline)))
		wait = min(2*wait, maxEndBackoff)
	}
}

// lateEnd records, for a session whose supervisor could not write the store when it ended, the
// outcome that supervisor kept (outcomes.keep), and says so; the one process that records it also
// reclaims its worktree. found is false when there is none; err is the store's failure to record
// it (an *UnrecordedError).
func (r *Runner) lateEnd(ctx context.Context, s store.Session) (found bool, err error) {
	o, found := r.supervisor.outcomes.kept(s.ID)
	if !found {
		return false, nil
	}
	note := fmt.Sprintf("recorded late, by reconciliation: its supervisor could not write the store when it ended (%s)", o.StoreError)
	reason := note
	if o.Reason != "" {
		reason = o.Reason + "; " + note
	}
	_, changed, err := r.Store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) {
		m.Status, m.Reason, m.Verified, m.ExitCode, m.EndedAt = o.Status, reason, o.Verified, o.ExitCode, o.EndedAt.UTC()
	})
	if err != nil {
		return true, unrecorded(o, err)
	}
	if !changed {
		return true, nil
	}
	_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "ended", Message: string(o.Status) + ": " + reason})
	_ = r.Store.DropPauses(ctx, s.ID)
	r.supervisor.outcomes.drop(s.ID)
	r.playbooks().settleReview(ctx, s.ID)
	r.reclaim(ctx, s)
	return true, nil
}

// UnrecordedError says that sessions the store still has in flight have ended, but the store
// could not be written to record it (a full disk, a read-only state directory): what list and
// get show of them is stale until it can be.
type UnrecordedError struct {
	// Notes says, for each such session, how it ended and why that is not recorded.
	Notes []string
}

func (e *UnrecordedError) Error() string {
	return "the store could not be written, so it still shows as in flight what ended (it is recorded once the store can be written: free space, or make .autonomy/state writable, and run list again):\n  " +
		strings.Join(e.Notes, "\n  ")
}

// unrecorded is the UnrecordedError of the end o the store could not take (err).
func unrecorded(o outcome, err error) *UnrecordedError {
	how := string(o.Status)
	if o.Reason != "" {
		how += " (" + o.Reason + ")"
	}
	return &UnrecordedError{Notes: []string{fmt.Sprintf("session %s ended %s at %s; not recorded: %v", o.Session, how, o.EndedAt.UTC().Format(time.RFC3339), err)}}
}

// isUnrecorded says whether err is an *UnrecordedError.
func isUnrecorded(err error) bool {
	var u *UnrecordedError
	return errors.As(err, &u)
}

// joinUnrecorded adds the notes of err, an *UnrecordedError, to into (made when nil); it
// reports false, leaving into as it was, for any other error.
func joinUnrecorded(into **UnrecordedError, err error) bool {
	var u *UnrecordedError
	if !errors.As(err, &u) {
		return false
	}
	if *into == nil {
		*into = &UnrecordedError{}
	}
	(*into).Notes = append((*into).Notes, u.Notes...)
	return true
}

// shownUnrecorded is the UnrecordedError of session s, still in flight in the store, whose
// supervisor kept its end because the store could not take it (it may be retrying); nil when
// there is none.
func (r *Runner) shownUnrecorded(s store.Session) error {
	if s.Status.Ended() {
		return nil
	}
	o, ok := r.supervisor.outcomes.kept(s.ID)
	if !ok {
		return nil
	}
	return unrecorded(o, errors.New(o.StoreError))
}
