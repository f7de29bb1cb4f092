package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/store"
)

// A session's effects on GitHub (codeHost github) are sent with the operator's token, so GitHub
// records them as the operator's: the comment, the issue opened, the labels a move to a state
// adds and removes. The event source must not fire actors on them as if the operator had acted
// (a session's effect fires nothing, as the gh-actions apply job's, whose token GitHub fires no
// workflow for). The session's supervisor records each write in the store's meta table before
// it sends it (a pending count under a key of its content) and, once GitHub answers, the comment's
// id or the new issue's number; the event source skips an event that either names, using up one
// pending count, and logs why. Recorded before the request, a write cannot reach the event source
// unrecorded, however the two race.

// appliedPrefix starts the store's meta keys of the writes the runner made for sessions.
const appliedPrefix = "github-applied:"

// appliedKey is the meta key of a write, by its parts.
func appliedKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return appliedPrefix + hex.EncodeToString(h[:16])
}

func itemKey(n int) string { return "#" + strconv.Itoa(n) }

// labelKey is a label's name as GitHub matches it, whatever its case: a label written "Ready"
// comes back in the events under the repository's spelling, "ready".
func labelKey(name string) string { return strings.ToLower(name) }

// writeKeys are the pending keys of w: one per event GitHub records for it.
func writeKeys(w ghwrite.Write) []string {
	switch w.Kind {
	case "comment":
		return []string{appliedKey("comment", itemKey(w.Item), w.Body)}
	case "issue":
		keys := []string{appliedKey("issue", w.Title, w.Body)}
		for _, l := range w.Labels {
			if k := appliedKey("labeled", "new", w.Title, w.Body, labelKey(l)); !slices.Contains(keys, k) { // one event per label
				keys = append(keys, k)
			}
		}
		return keys
	case "labeled", "unlabeled":
		return []string{appliedKey(w.Kind, itemKey(w.Item), labelKey(w.Label))}
	}
	return nil
}

// idKey is the meta key of what GitHub made of a write: the comment's id, the number.
func idKey(kind string, id int64) string {
	return appliedKey(kind+"-id", strconv.FormatInt(id, 10))
}

// eventKeys are the keys that name ev as a write of the runner: by its id (the comment's, the
// new issue's number) and by its content (pending counts).
func eventKeys(ev ghEvent) (id string, pending []string) {
	n, err := strconv.Atoi(ev.Ref)
	switch {
	case err != nil:
		return "", nil
	case ev.Name == "issue_comment":
		return idKey("comment", ev.ID), []string{appliedKey("comment", itemKey(n), ev.Body)}
	case ev.Action == "opened":
		return idKey("issue", int64(n)), []string{appliedKey("issue", ev.Title, ev.Body)}
	case ev.Action == "labeled":
		return "", []string{appliedKey("labeled", itemKey(n), labelKey(ev.Label)), appliedKey("labeled", "new", ev.Title, ev.Body, labelKey(ev.Label))}
	case ev.Action == "unlabeled":
		return "", []string{appliedKey("unlabeled", itemKey(n), labelKey(ev.Label))}
	}
	return "", nil
}

// countApplied adds delta to the pending count of key, for session.
func countApplied(tx *store.Tx, key string, delta int, session string) error {
	v, _, err := tx.Meta(key)
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(strings.Fields(v + " 0")[0])
	if n += delta; n < 0 {
		n = 0
	}
	return tx.SetMeta(key, fmt.Sprintf("%d %s", n, session))
}

// usePending uses up one pending count of key: the session it was recorded for, or "".
func usePending(tx *store.Tx, key string) (string, error) {
	v, ok, err := tx.Meta(key)
	if err != nil || !ok {
		return "", err
	}
	count, session, _ := strings.Cut(v, " ")
	if n, _ := strconv.Atoi(count); n <= 0 || session == "" {
		return "", nil
	}
	return session, countApplied(tx, key, -1, session)
}

// appliedBy is, in tx, the session whose effect the runner applied ev is ("" when none), its
// record used up.
func appliedBy(tx *store.Tx, ev ghEvent) (string, error) {
	id, pending := eventKeys(ev)
	if id != "" {
		session, ok, err := tx.Meta(id)
		if err != nil {
			return "", err
		}
		if ok {
			_, err := usePending(tx, pending[0])
			return session, err
		}
	}
	for _, k := range pending {
		if session, err := usePending(tx, k); err != nil || session != "" {
			return session, err
		}
	}
	return "", nil
}

// skipApplied reports, in tx, whether ev is a write the runner applied for a session (appliedBy),
// which fires nothing: the report and the session's log say so.
func skipApplied(tx *store.Tx, rep *PollReport, ev ghEvent, where string) (bool, error) {
	by, err := appliedBy(tx, ev)
	if err != nil || by == "" {
		return false, err
	}
	why := fmt.Sprintf("%s %s %d by %s %s fires nothing: the runner applied it for session %s, and a session's own effect fires no actor",
		ev.Name, ev.Action, ev.ID, ev.Login, where, by)
	rep.Ignored = append(rep.Ignored, why)
	return true, tx.Log(store.Event{Session: by, Kind: "refused", Message: why})
}

// record is the applier's ghwrite.Recorder: it records w for session g.id before it is sent,
// drops the record when GitHub refused the write (nothing was written), and records the id of
// what it created.
func (g *githubApplier) record(ctx context.Context, w ghwrite.Write) (func(int64, error, bool), error) {
	if !pollsWrites(g.r.In, w.Kind) {
		// No event of it is ever read: a record would only stand for a person's like event
		// once a recompiled installation polls them.
		return func(int64, error, bool) {}, nil
	}
	keys := writeKeys(w)
	err := g.r.Store.Tx(ctx, func(tx *store.Tx) error {
		for _, k := range keys {
			if err := countApplied(tx, k, 1, g.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func(id int64, err error, answered bool) {
		_ = g.r.Store.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			switch {
			case err != nil && answered:
				for _, k := range keys {
					if err := countApplied(tx, k, -1, g.id); err != nil {
						return err
					}
				}
			case err == nil && id != 0:
				return tx.SetMeta(idKey(w.Kind, id), g.id)
			}
			return nil
		})
	}, nil
}
