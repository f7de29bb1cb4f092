package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/store"
)

// A session's effects on GitHub (codeHost github) are sent with the operator's token, so GitHub
// records them as the operator's: the comment, the issue opened, the labels a move to a state
// adds and removes. The event source must not fire actors on them as if the operator had acted
// (a session's effect fires nothing, as the gh-actions apply job's, whose token GitHub fires no
// workflow for). The session's supervisor records each write in the store's meta table before
// it sends it: one row per event GitHub makes of it, under a key of its content and of the write,
// valued with the list (stream) whose poll reads that event, the session and, once GitHub
// answered, the comment's id or the new issue's number. The event source skips an event a record
// names, drops that record (used up), and logs why. Recorded before the request, a write cannot
// reach the event source unrecorded, however the two race.
//
// A record stands only for an event the source has yet to read, never for a person's like event
// later. A record is settled once its write has ended (GitHub answered, or gave no answer, or
// the session is over: nothing of it is still on its way), and GitHub lists what it has answered
// soon after (appliedGrace, by the runner's clock alone, covers its replicas' lag): a read of the
// list that starts appliedGrace after the record is settled and reads it to its newest item
// (every page a poll reads, or a first poll that starts from the newest, or a 304: nothing new
// since a read that did) has passed the record's event, handled it (the record used up) or
// passed over it (a first poll; items beyond maxPages). So each read of a list, in the
// transaction that reads its cursor, notes its settled records, and the next read drops those
// that are left once that read came to the list's top: no clock is compared with GitHub's, and no
// transaction is added to a poll (between two reads of a list none of its events is handled, so
// the drop need not come sooner). A record whose write GitHub refused is dropped at once. Besides,
// a comment's or new issue's record with GitHub's id names only the event with that id (a
// person's same comment, made just before the write's, is not taken for it), so the grace can
// only make a person's same label, within it, look like the session's. The meta table holds the
// records of the writes in flight and of the last appliedGrace at most (and of one read beyond);
// rows of another form (an older build's) are dropped.
//
// Three more rules keep a record from standing for a person's event. An event by anyone but the
// user of the runner's token (GET /user, when GitHub says) is never the runner's write. An event
// GitHub made more than appliedGrace after the record was settled is not its write (GitHub made
// the write's before it answered; GitHub's time of it is taken to the runner's clock by the skew
// its answers' Date header shows). And a record no read passes (no serve runs, or its list is
// not polled) goes appliedKeep after it was settled, at the next write. A read that fails
// partway forgets its ETags, so the next read is whole (a 304 would pass over the pages it had
// not read). A write of a kind no actor polls now is still recorded where a serve read its list
// before: a recompiled installation reads on from that cursor.

// appliedPrefix starts the store's meta keys of the writes the runner made for sessions.
const appliedPrefix = "github-applied:"

// appliedKey is the content key of a write's event, by its parts: its records' keys start with it.
func appliedKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return appliedPrefix + hex.EncodeToString(h[:16])
}

func itemKey(n int) string { return "#" + strconv.Itoa(n) }

// labelKey is a label's name as GitHub matches it, whatever its case: a label written "Ready"
// comes back in the events under the repository's spelling, "ready".
func labelKey(name string) string { return strings.ToLower(name) }

// writeKeys are the content keys of w: one per event GitHub records for it.
func writeKeys(w ghwrite.Write) []string {
	var keys []string
	for _, r := range writeRecords(w) {
		keys = append(keys, r.content)
	}
	return keys
}

// writeRecords are the records of w: one per event GitHub records for it, with the list whose
// poll reads that event.
func writeRecords(w ghwrite.Write) []appliedRecord {
	switch w.Kind {
	case "comment":
		return []appliedRecord{{content: appliedKey("comment", itemKey(w.Item), w.Body), list: commentCursorKey}}
	case "issue":
		recs := []appliedRecord{{content: appliedKey("issue", w.Title, w.Body), list: issuesCursorKey}}
		for _, l := range w.Labels {
			k := appliedKey("labeled", "new", w.Title, w.Body, labelKey(l))
			if !slices.ContainsFunc(recs, func(r appliedRecord) bool { return r.content == k }) { // one event per label
				recs = append(recs, appliedRecord{content: k, list: issueEventsCursorKey, label: l})
			}
		}
		return recs
	case "labeled", "unlabeled":
		return []appliedRecord{{content: appliedKey(w.Kind, itemKey(w.Item), labelKey(w.Label)), list: issueEventsCursorKey}}
	}
	return nil
}

// appliedRecord is one row of a write: under the key content + ":" + the write's nonce, the value
// "LIST STATE SESSION ID AT GHAT": the cursor key of the list whose poll reads its event, sent (in
// flight) or settled, the session, GitHub's id of what it made (0 when none or not yet), when it
// was settled, and the time GitHub's answer carried (0 when none; a row of an older build has no
// GHAT).
type appliedRecord struct {
	key, content, list string
	settled            bool
	session            string
	id                 int64
	at                 int64 // when it was settled (Unix seconds, the runner's clock); 0 while sent
	// ghAt is when GitHub answered the write, on GitHub's clock (its answer's Date; Unix seconds),
	// 0 when it gave no answer or no date.
	ghAt int64
	// label is, for the label of an issue the write opens, its name: once GitHub has answered
	// with the issue's number, the record names the label on that issue, whatever its title
	// and body are by then (GitHub's issue events show the issue as it is now).
	label string
}

func (r appliedRecord) value() string {
	state := "sent"
	if r.settled {
		state = "settled"
	}
	return fmt.Sprintf("%s %s %s %d %d %d", r.list, state, r.session, r.id, r.at, r.ghAt)
}

// appliedKeep is how long a settled record is kept at most when no read of its list passes it (no
// serve runs, or its list is not polled): a serve stopped longer reads the runner's writes of
// before as the operator's.
const appliedKeep = 7 * 24 * time.Hour

// dropStale drops, in tx, the records settled more than appliedKeep before now.
func dropStale(tx *store.Tx, now time.Time) error {
	recs, _, err := appliedRecords(tx)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.settled && r.at > 0 && now.Unix()-r.at > int64(appliedKeep/time.Second) {
			if err := tx.DeleteMeta(r.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// appliedGrace is how long a settled record stands before a read of its list may pass it: GitHub
// answers a write before every list shows it (its lists are read from replicas), and a record
// dropped before its event is listed would let the session's write fire as the operator's. Both
// times are the runner's own clock.
const appliedGrace = 2 * time.Minute

// parseRecord reads the row key=value; ok is false for a row of another form (an older build's).
func parseRecord(key, value string) (appliedRecord, bool) {
	f := strings.Fields(value)
	i := strings.LastIndexByte(key, ':')
	if (len(f) != 5 && len(f) != 6) || i <= len(appliedPrefix) || (f[1] != "sent" && f[1] != "settled") || !isWriteList(f[0]) {
		return appliedRecord{}, false
	}
	var ghAt int64
	if len(f) == 6 {
		var err error
		if ghAt, err = strconv.ParseInt(f[5], 10, 64); err != nil {
			return appliedRecord{}, false
		}
	}
	id, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return appliedRecord{}, false
	}
	at, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil {
		return appliedRecord{}, false
	}
	return appliedRecord{key: key, content: key[:i], list: f[0], settled: f[1] == "settled", session: f[2], id: id, at: at, ghAt: ghAt}, true
}

// isWriteList reports whether key is the cursor of a list that reads the events of writes.
func isWriteList(key string) bool {
	return key == commentCursorKey || key == issuesCursorKey || key == issueEventsCursorKey
}

// appliedRecords are, in tx, the records of the writes (those of a form no build makes now
// included, ok false: they are dropped).
func appliedRecords(tx *store.Tx) (recs []appliedRecord, other []string, err error) {
	keys, values, err := tx.MetaPrefix(appliedPrefix)
	if err != nil {
		return nil, nil, err
	}
	for i, k := range keys {
		if r, ok := parseRecord(k, values[i]); ok {
			recs = append(recs, r)
		} else {
			other = append(other, k)
		}
	}
	return recs, other, nil
}

// eventKeys are the keys that name ev as a write of the runner: the number GitHub answered the
// write with (the comment's id, the issue's number; 0 for none) and the content keys.
func eventKeys(ev ghEvent) (num int64, content []string) {
	n, err := strconv.Atoi(ev.Ref)
	switch {
	case err != nil:
		return 0, nil
	case ev.Name == "issue_comment":
		return ev.ID, []string{appliedKey("comment", itemKey(n), ev.Body)}
	case ev.Action == "opened":
		return int64(n), []string{appliedKey("issue", ev.Title, ev.Body)}
	case ev.Action == "labeled":
		return int64(n), []string{appliedKey("labeled", itemKey(n), labelKey(ev.Label)), appliedKey("labeled", "new", ev.Title, ev.Body, labelKey(ev.Label))}
	case ev.Action == "unlabeled":
		return int64(n), []string{appliedKey("unlabeled", itemKey(n), labelKey(ev.Label))}
	}
	return 0, nil
}

// eventList is the cursor key of the list ev was read from.
func eventList(ev ghEvent) string {
	switch {
	case ev.Name == "issue_comment":
		return commentCursorKey
	case ev.Action == "opened":
		return issuesCursorKey
	}
	return issueEventsCursorKey
}

// appliedBy is, in tx, the session whose effect the runner applied ev is ("" when none), its
// record used up (dropped). A record GitHub's answer gave an id names the event of that id (a
// comment, an issue opened), whatever its content now, or a label event on that issue of its
// content; a record without one names an event of its content.
// skew is how far GitHub's clock is ahead of the runner's, in seconds (EventSource.clockSkew).
func appliedBy(tx *store.Tx, ev ghEvent, skew int64) (string, error) {
	num, content := eventKeys(ev)
	if len(content) == 0 {
		return "", nil
	}
	recs, _, err := appliedRecords(tx)
	if err != nil {
		return "", err
	}
	list := eventList(ev)
	// The id GitHub answered the write with names its event, whenever GitHub made it.
	byID := ev.Name == "issue_comment" || ev.Action == "opened"
	i := slices.IndexFunc(recs, func(r appliedRecord) bool { return r.list == list && byID && r.id != 0 && r.id == num })
	if i < 0 {
		// GitHub made the write's event before it answered: an event made later than that (by
		// more than appliedGrace) is someone else's, however alike. Both times are GitHub's when
		// the answer carried its date; else the record's settling, on the runner's clock, is
		// compared with GitHub's time brought to the runner's by their skew now.
		recs = slices.DeleteFunc(recs, func(r appliedRecord) bool {
			if !r.settled || ev.Created.IsZero() {
				return false
			}
			if r.ghAt > 0 {
				return ev.Created.Unix() > r.ghAt+int64(appliedGrace/time.Second)
			}
			return ev.Created.Unix()-skew > r.at+int64(appliedGrace/time.Second)
		})
		i = slices.IndexFunc(recs, func(r appliedRecord) bool {
			return r.list == list && slices.Contains(content, r.content) && (r.id == 0 || r.id == num)
		})
	}
	if i < 0 {
		return "", nil
	}
	return recs[i].session, tx.DeleteMeta(recs[i].key)
}

// skipApplied reports, in tx, whether ev is a write the runner applied for a session (appliedBy),
// which fires nothing: the report and the session's log say so. writer is the login of the
// runner's token when GitHub said it: an event by anyone else is none of its writes.
func skipApplied(tx *store.Tx, rep *PollReport, ev ghEvent, where, writer string, skew int64) (bool, error) {
	if writer != "" && !strings.EqualFold(ev.Login, writer) {
		return false, nil // not made with the runner's token: a person's, whatever it says
	}
	by, err := appliedBy(tx, ev, skew)
	if err != nil || by == "" {
		return false, err
	}
	why := fmt.Sprintf("%s %s %d by %s %s fires nothing: the runner applied it for session %s, and a session's own effect fires no actor",
		ev.Name, ev.Action, ev.ID, ev.Login, where, by)
	rep.Ignored = append(rep.Ignored, why)
	return true, tx.Log(store.Event{Session: by, Kind: "refused", Message: why})
}

// pruneApplied is, in tx (the one that reads the cursor of list before a read of it), the records
// of list settled now, which the read passes (see the top of this file); it first drops spent,
// those of the previous read of list when that read came to the list's top, and any row of
// a form no build makes now.
func pruneApplied(tx *store.Tx, list string, spent []string, now time.Time) (settled []string, err error) {
	recs, other, err := appliedRecords(tx)
	if err != nil {
		return nil, err
	}
	for _, k := range append(other, spent...) {
		if err := tx.DeleteMeta(k); err != nil {
			return nil, err
		}
	}
	ended := map[string]bool{}
	for _, r := range recs {
		if r.list != list || slices.Contains(spent, r.key) {
			continue
		}
		if r.settled && (r.at <= 0 || r.at > now.Unix()) {
			// Settled in the future (the clock stepped back) or at no time (a row edited by
			// hand): settled now, so the grace ends and the row goes.
			r.at = now.Unix()
			if err := tx.SetMeta(r.key, r.value()); err != nil {
				return nil, err
			}
		}
		if !r.settled {
			over, seen := ended[r.session]
			if !seen {
				s, ok, err := tx.Get(r.session)
				if err != nil {
					return nil, err
				}
				over = !ok || s.Status.Ended() // its supervisor is gone: nothing of it is on its way
				ended[r.session] = over
			}
			if !over {
				continue
			}
			// Settled now: its write may still be answered and listed as the session ended.
			r.settled, r.at = true, now.Unix()
			if err := tx.SetMeta(r.key, r.value()); err != nil {
				return nil, err
			}
		}
		if now.Unix()-r.at < int64(appliedGrace/time.Second) {
			continue // GitHub may not list its event yet
		}
		settled = append(settled, r.key)
	}
	return settled, nil
}

// record is the applier's ghwrite.Recorder: it records w for session g.id before it is sent,
// drops the record when GitHub refused the write (nothing was written), and otherwise settles it,
// with the id of what GitHub created.
func (g *githubApplier) record(ctx context.Context, w ghwrite.Write) (func(ghwrite.Ended), error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	all := writeRecords(w)
	var recs []appliedRecord
	polled := pollsWrites(g.r.In, w.Kind)
	now := g.r.opts.Now()
	err := g.r.Store.Tx(ctx, func(tx *store.Tx) error {
		if err := dropStale(tx, now); err != nil {
			return err
		}
		for _, r := range all {
			if !polled {
				// No actor reads its events now. Recorded still where a serve read its list
				// before: a recompiled installation that polls them again reads on from there.
				if _, ok, err := tx.Meta(r.list); err != nil || !ok {
					if err != nil {
						return err
					}
					continue
				}
			}
			r.key, r.session = r.content+":"+hex.EncodeToString(nonce[:]), g.id
			if err := tx.SetMeta(r.key, r.value()); err != nil {
				return err
			}
			recs = append(recs, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func(e ghwrite.Ended) {
		id, err, answered := e.ID, e.Err, e.Answered
		_ = g.r.Store.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			for _, r := range recs {
				if _, ok, err := tx.Meta(r.key); err != nil || !ok {
					if err != nil {
						return err
					}
					continue // used up already: its event was read before the answer came
				}
				if err != nil && answered {
					if err := tx.DeleteMeta(r.key); err != nil {
						return err
					}
					continue
				}
				r.settled, r.at = true, g.r.opts.Now().Unix()
				if !e.At.IsZero() {
					r.ghAt = e.At.Unix()
				}
				if err == nil && (w.Kind == "comment" || w.Kind == "issue") { // a label's write has no id
					r.id = id
				}
				if r.label != "" && r.id > 0 {
					// A new issue's label: named by the issue's number from now on.
					if err := tx.DeleteMeta(r.key); err != nil {
						return err
					}
					r.content = appliedKey("labeled", itemKey(int(r.id)), labelKey(r.label))
					r.key = r.content + r.key[strings.LastIndexByte(r.key, ':'):]
				}
				if err := tx.SetMeta(r.key, r.value()); err != nil {
					return err
				}
			}
			return nil
		})
	}, nil
}
