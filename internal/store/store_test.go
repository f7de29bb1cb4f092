package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

var ctx = context.Background()

// openStore opens a store in a fresh directory, closed when the test ends.
func openStore(t testing.TB) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "state.db"))
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// insert stores s in a transaction of its own and returns it as Insert filled it in.
func insert(t testing.TB, st *Store, s Session) Session {
	t.Helper()
	if err := st.Tx(ctx, func(tx *Tx) error { return tx.Insert(&s) }); err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t testing.TB, st *Store, id string) Session {
	t.Helper()
	s, ok, err := st.Get(ctx, id)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = ok %v, %v", id, ok, err)
	}
	return s
}

func ids(ss []Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

func TestRoundTripEveryField(t *testing.T) {
	st := openStore(t)
	zone := time.FixedZone("somewhere", 5*3600+1800)
	code := 137
	in := Session{
		Actor:  "triage",
		Kind:   "human",
		Status: ir.Paused,
		Ref:    "github:o/r#12",
		Params: ir.LaunchParams{
			"MULTI":     "line one\nline two\r\n\ttabbed\n",
			"QUOTES":    `say "hi" and 'bye' \ backslash \" \n literal`,
			"TEMPLATE":  "${{ x }} $HOME `cmd` $(rm -rf /)",
			"UNICODE":   "ünïcödé ✓ 日本語 🙂 \u2028\u2029",
			"EMPTY":     "",
			"HTML":      "<a href=\"x\">&amp;</a>",
			"NUL":       "a\x00b",
			"JSONISH":   `{"not": "an object"}`,
			"key with ": "spaces = and \"quotes\"",
		},
		Trigger:         "cron",
		Origin:          "session:3-abcd",
		Branch:          "autonomy/triage-1",
		Workdir:         "/tmp/work dir/with spaces",
		Worktree:        true,
		LogPath:         "/var/log/x.log",
		Timeout:         90 * time.Minute,
		SupervisorPID:   4242,
		SupervisorStart: 1<<63 + 7, // beyond int64: must come back bit for bit
		PID:             4243,
		PIDStart:        123456789,
		CreatedAt:       time.Date(2024, 2, 29, 23, 59, 59, 123456789, zone),
		StartedAt:       time.Date(2024, 3, 1, 0, 0, 1, 1, time.UTC),
		ExitCode:        &code,
		Reason:          "paused: waiting for a person",
		Verified:        "pr merged",
		TokenHash:       strings.Repeat("ab", 32),
		Evidence:        "https://example.com/evidence?a=1&b=2",
		ResolvedBy:      "alice",
	}
	want := in
	s := insert(t, st, in)
	if s.Seq != 1 || s.ID != "1-"+st.tag {
		t.Errorf("Insert assigned seq %d id %q, want 1 and 1-%s", s.Seq, s.ID, st.tag)
	}
	if !s.CreatedAt.Equal(want.CreatedAt) || s.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", s.CreatedAt, want.CreatedAt)
	}
	got := get(t, st, s.ID)
	if !reflect.DeepEqual(got, s) {
		t.Errorf("Get differs from what Insert filled in:\n got %+v\nwant %+v", got, s)
	}
	// Everything the caller set comes back as set (times as the same instants).
	want.Seq, want.ID = s.Seq, s.ID
	want.CreatedAt, want.StartedAt = got.CreatedAt, got.StartedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the session:\n got %+v\nwant %+v", got, want)
	}
	if !got.StartedAt.Equal(in.StartedAt) || !got.EndedAt.IsZero() {
		t.Errorf("StartedAt %v EndedAt %v, want %v and zero", got.StartedAt, got.EndedAt, in.StartedAt)
	}
	if got.SupervisorStart != in.SupervisorStart {
		t.Errorf("SupervisorStart = %d, want %d", got.SupervisorStart, in.SupervisorStart)
	}
	for k, v := range in.Params {
		if got.Params[k] != v {
			t.Errorf("param %q = %q, want %q", k, got.Params[k], v)
		}
	}
	code = 1 // the stored exit code is the store's own copy
	if *get(t, st, s.ID).ExitCode != 137 {
		t.Error("the exit code aliases the caller's variable")
	}
	// The params are stored as a JSON object, readable by SQLite itself.
	var tmpl string
	if err := st.db.QueryRow(`SELECT params ->> '$.TEMPLATE' FROM sessions WHERE seq = 1`).Scan(&tmpl); err != nil || tmpl != in.Params["TEMPLATE"] {
		t.Errorf("params in SQL: %q, %v", tmpl, err)
	}
}

func TestDefaultsAndEmptyParams(t *testing.T) {
	st := openStore(t)
	before := time.Now()
	a := insert(t, st, Session{Actor: "a", Kind: "agent", Params: ir.LaunchParams{}})
	b := insert(t, st, Session{Actor: "a", Kind: "agent"})
	for _, s := range []Session{a, b, get(t, st, a.ID), get(t, st, b.ID)} {
		if s.Params != nil {
			t.Errorf("%s: empty params came back as %#v, want nil", s.ID, s.Params)
		}
		if s.Status != ir.Running {
			t.Errorf("%s: status %q, want running", s.ID, s.Status)
		}
		if s.CreatedAt.Before(before.Add(-time.Second)) || s.ExitCode != nil || !s.StartedAt.IsZero() || !s.EndedAt.IsZero() {
			t.Errorf("%s: defaults wrong: %+v", s.ID, s)
		}
	}
	// A session inserted already ended gets an end, so that Check holds.
	c := insert(t, st, Session{Actor: "a", Kind: "agent", Status: ir.Done})
	if c.EndedAt.IsZero() || get(t, st, c.ID).EndedAt.IsZero() {
		t.Error("a session inserted done has no end time")
	}
	err := st.Tx(ctx, func(tx *Tx) error { return tx.Insert(&Session{Actor: "a", Status: "finished"}) })
	if err == nil || !strings.Contains(err.Error(), `unknown status "finished"`) {
		t.Errorf("unknown status: %v", err)
	}
	err = st.Tx(ctx, func(tx *Tx) error { return tx.Insert(&Session{Kind: "agent"}) })
	if err == nil {
		t.Error("a session without an actor was inserted")
	}
	err = st.Tx(ctx, func(tx *Tx) error {
		return tx.Insert(&Session{Actor: "a", Params: ir.LaunchParams{"BAD": "\xff\xfe"}})
	})
	if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("invalid UTF-8 param: %v", err)
	}
	if err := st.Check(ctx); err != nil {
		t.Error(err)
	}
}

func TestIDsNeverReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tag := st.tag
	var seen []string
	for i := 0; i < 3; i++ {
		seen = append(seen, insert(t, st, Session{Actor: "a", Kind: "agent"}).ID)
	}
	if want := []string{"1-" + tag, "2-" + tag, "3-" + tag}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("ids %v, want %v", seen, want)
	}
	if _, err := st.db.Exec(`DELETE FROM sessions WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	if id := insert(t, st, Session{Actor: "a", Kind: "agent"}).ID; id != "4-"+tag {
		t.Errorf("after deleting the last row the next id is %s, want 4-%s", id, tag)
	}
	if _, err := st.db.Exec(`DELETE FROM sessions`); err != nil {
		t.Fatal(err)
	}
	if id := insert(t, st, Session{Actor: "a", Kind: "agent"}).ID; id != "5-"+tag {
		t.Errorf("after deleting every row the next id is %s, want 5-%s", id, tag)
	}
	if err := st.Check(ctx); err != nil {
		t.Error(err)
	}
	st.Close()

	// The tag survives reopening.
	st = openAt(t, path)
	if st.tag != tag {
		t.Errorf("tag changed on reopening: %s, was %s", st.tag, tag)
	}
	st.Close()

	// A recreated file draws a new tag, so its ids differ from the old file's.
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	st = openAt(t, path)
	id := insert(t, st, Session{Actor: "a", Kind: "agent"}).ID
	if st.tag == tag || id == "1-"+tag || !strings.HasPrefix(id, "1-") {
		t.Errorf("recreated database: tag %s (old %s), first id %s", st.tag, tag, id)
	}
	if !validTag(st.tag) {
		t.Errorf("tag %q is not 4 lowercase base32 characters", st.tag)
	}
}

func TestModify(t *testing.T) {
	st := openStore(t)
	orig := insert(t, st, Session{Actor: "a", Kind: "agent", Params: ir.LaunchParams{"X": "1"}})
	running := []ir.SessionStatus{ir.Running, ir.Paused}

	// A status outside from: nothing is written, fn is not called, the current session returns.
	s, ok, err := st.Modify(ctx, orig.ID, []ir.SessionStatus{ir.Paused}, func(m *Session) {
		t.Error("fn called for a session whose status is not in from")
	})
	if err != nil || ok || !reflect.DeepEqual(s, orig) {
		t.Errorf("Modify with from not matching = %+v, %v, %v", s, ok, err)
	}

	// Within from: every mutable field is written; the immutable ones are kept.
	s, ok, err = st.Modify(ctx, orig.ID, running, func(m *Session) {
		m.Seq, m.ID, m.Actor, m.Kind, m.CreatedAt = 99, "99-zzzz", "mallory", "human", time.Unix(1, 0)
		m.Status, m.PID, m.Params["Y"] = ir.Paused, 77, "2"
		m.Reason = "waiting"
	})
	if err != nil || !ok {
		t.Fatalf("Modify = %v, %v", ok, err)
	}
	got := get(t, st, orig.ID)
	if !reflect.DeepEqual(got, s) {
		t.Errorf("Modify returned %+v, but Get says %+v", s, got)
	}
	if got.Seq != orig.Seq || got.ID != orig.ID || got.Actor != "a" || got.Kind != "agent" || !got.CreatedAt.Equal(orig.CreatedAt) {
		t.Errorf("Modify changed an immutable field: %+v", got)
	}
	if got.Status != ir.Paused || got.PID != 77 || got.Reason != "waiting" || got.Params["Y"] != "2" || got.Params["X"] != "1" {
		t.Errorf("Modify lost a change: %+v", got)
	}
	if _, ok, _ := st.Get(ctx, "99-zzzz"); ok {
		t.Error("the id fn wrote exists")
	}

	// Ending it without an end time gets one; an empty from accepts any status.
	s, ok, err = st.Modify(ctx, orig.ID, running, func(m *Session) { m.Status = ir.Done })
	if err != nil || !ok || s.EndedAt.IsZero() {
		t.Errorf("ending: %+v, %v, %v", s, ok, err)
	}
	if _, ok, _ = st.Modify(ctx, orig.ID, running, func(m *Session) { m.Status = ir.Running }); ok {
		t.Error("an ended session was revived through from running/paused")
	}
	if s, ok, err = st.Modify(ctx, orig.ID, nil, func(m *Session) { m.Evidence = "late note" }); !ok || err != nil || s.Evidence != "late note" || s.Status != ir.Done {
		t.Errorf("Modify with empty from: %+v, %v, %v", s, ok, err)
	}

	// Unknown session: zero Session, false, no error.
	if s, ok, err := st.Modify(ctx, "404-none", nil, func(*Session) { t.Error("fn called") }); ok || err != nil || s.ID != "" {
		t.Errorf("Modify of an unknown id = %+v, %v, %v", s, ok, err)
	}

	// An invalid status is refused and nothing is written.
	before := get(t, st, orig.ID)
	if _, _, err := st.Modify(ctx, orig.ID, nil, func(m *Session) { m.Status, m.Reason = "", "x" }); err == nil {
		t.Error("an empty status was accepted")
	}
	if after := get(t, st, orig.ID); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused Modify wrote: %+v", after)
	}
}

func TestTxRollsBack(t *testing.T) {
	st := openStore(t)
	s := insert(t, st, Session{Actor: "a", Kind: "agent"})
	boom := errors.New("boom")
	err := st.Tx(ctx, func(tx *Tx) error {
		if _, _, err := tx.Modify(s.ID, nil, func(m *Session) { m.Reason = "error" }); err != nil {
			return err
		}
		if err := tx.Insert(&Session{Actor: "b", Kind: "agent"}); err != nil {
			return err
		}
		// The transaction sees its own writes.
		if n, _, _ := tx.Get(s.ID); n.Reason != "error" {
			t.Error("the transaction does not see its own write")
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx = %v, want boom", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "panic" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		st.Tx(ctx, func(tx *Tx) error {
			tx.Modify(s.ID, nil, func(m *Session) { m.Reason = "panic" })
			panic("panic")
		})
	}()
	if got := get(t, st, s.ID); got.Reason != "" {
		t.Errorf("a rolled back write stayed: %q", got.Reason)
	}
	if ss, _ := st.List(ctx, ListOptions{All: true}); len(ss) != 1 {
		t.Errorf("a rolled back insert stayed: %v", ids(ss))
	}
	// The store is still usable: the write lock was released both times.
	insert(t, st, Session{Actor: "c", Kind: "agent"})
}

func TestListAndActive(t *testing.T) {
	st := openStore(t)
	mk := func(actor, kind string, status ir.SessionStatus, origin string) string {
		return insert(t, st, Session{Actor: actor, Kind: kind, Status: status, Origin: origin}).ID
	}
	a1 := mk("a", "agent", ir.Running, "operator")
	a2 := mk("a", "agent", ir.Done, "operator")
	b1 := mk("b", "agent", ir.Paused, "schedule")
	h1 := mk("h", "human", ir.Running, "session:"+a1)
	a3 := mk("a", "agent", ir.Running, "schedule")
	b2 := mk("b", "agent", ir.Failed, "schedule")
	a4 := mk("a", "agent", ir.Cancelled, "schedule")

	for _, c := range []struct {
		opts ListOptions
		want []string
	}{
		{ListOptions{}, []string{a1, b1, h1, a3}},
		{ListOptions{Actor: "a"}, []string{a1, a3}},
		{ListOptions{Actor: "nobody"}, []string{}},
		{ListOptions{All: true}, []string{a1, a2, b1, h1, a3, b2, a4}},
		{ListOptions{All: true, Actor: "b"}, []string{b1, b2}},
		{ListOptions{All: true, Limit: 3}, []string{a3, b2, a4}},
		{ListOptions{All: true, Actor: "a", Limit: 2}, []string{a3, a4}},
		{ListOptions{All: true, Limit: 100}, []string{a1, a2, b1, h1, a3, b2, a4}},
		{ListOptions{Limit: 2}, []string{h1, a3}},
	} {
		ss, err := st.List(ctx, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(ss); !reflect.DeepEqual(got, c.want) {
			t.Errorf("List(%+v) = %v, want %v", c.opts, got, c.want)
		}
	}

	err := st.Tx(ctx, func(tx *Tx) error {
		for _, c := range []struct {
			kind string
			want int
		}{{"", 4}, {"agent", 3}, {"human", 1}, {"robot", 0}} {
			if n, err := tx.Active(c.kind); err != nil || n != c.want {
				t.Errorf("Active(%q) = %d, %v, want %d", c.kind, n, err, c.want)
			}
		}
		for _, c := range []struct {
			actor, origin string
			want          int
		}{{"a", "", 2}, {"a", "schedule", 1}, {"a", "operator", 1}, {"b", "schedule", 1}, {"b", "operator", 0}, {"z", "", 0}} {
			if n, err := tx.ActorActive(c.actor, c.origin); err != nil || n != c.want {
				t.Errorf("ActorActive(%q, %q) = %d, %v, want %d", c.actor, c.origin, n, err, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInFlightUsesIndex pins the query plans that keep List and the admission counts cheap
// however many sessions have ended.
func TestInFlightUsesIndex(t *testing.T) {
	st := openStore(t)
	for _, q := range []string{
		"SELECT " + sessionCols + " FROM " + inFlightFrom + " WHERE " + inFlightWhere + " ORDER BY seq",
		"SELECT " + sessionCols + " FROM " + inFlightFrom + " WHERE " + inFlightWhere + " AND actor = 'a' ORDER BY seq",
		"SELECT count(*) FROM " + inFlightFrom + " WHERE " + inFlightWhere + " AND kind = 'agent'",
		"SELECT count(*) FROM " + inFlightFrom + " WHERE " + inFlightWhere + " AND actor = 'a' AND origin = 'schedule'",
	} {
		rows, err := st.db.Query("EXPLAIN QUERY PLAN " + q)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "; "), "sessions_in_flight") {
			t.Errorf("%s\nplan: %v, want the index sessions_in_flight", q, plan)
		}
	}
}

func TestMetaAndPending(t *testing.T) {
	st := openStore(t)
	t0 := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC)
	err := st.Tx(ctx, func(tx *Tx) error {
		if _, ok, err := tx.Meta("last-tick"); ok || err != nil {
			t.Errorf("Meta of a missing key = %v, %v", ok, err)
		}
		for _, v := range []string{"1", "2\nwith newline"} {
			if err := tx.SetMeta("last-tick", v); err != nil {
				return err
			}
			if got, ok, err := tx.Meta("last-tick"); got != v || !ok || err != nil {
				t.Errorf("Meta = %q, %v, %v, want %q", got, ok, err, v)
			}
		}
		if err := tx.SetMeta(tagKey, "zzzz"); err == nil {
			t.Error("the instance tag was overwritten")
		}
		if err := tx.SetPending("daily", t0.Add(time.Hour)); err != nil {
			return err
		}
		if err := tx.SetPending("daily", t0.Add(2*time.Hour)); err != nil { // later: kept earlier
			return err
		}
		if err := tx.SetPending("hourly", t0.Add(time.Hour)); err != nil {
			return err
		}
		if err := tx.SetPending("hourly", t0.In(time.FixedZone("x", 3600))); err != nil { // earlier: replaces
			return err
		}
		return tx.SetPending("gone", t0)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Tx(ctx, func(tx *Tx) error {
		if err := tx.ClearPending("gone"); err != nil {
			return err
		}
		if err := tx.ClearPending("never-set"); err != nil {
			return err
		}
		p, err := tx.Pending()
		if err != nil {
			return err
		}
		want := map[string]time.Time{"daily": t0.Add(time.Hour), "hourly": t0}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("Pending = %v, want %v", p, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// MetaPrefix lists the keys that start with the prefix, whatever characters a LIKE pattern would
// read (%, _), and no other; DeleteMeta drops one key, and never the instance tag.
func TestMetaPrefixAndDelete(t *testing.T) {
	st := openStore(t)
	err := st.Tx(ctx, func(tx *Tx) error {
		for _, k := range []string{"w:%a:2", "w:%a:1", "w:_b", "wx:%a", "w:", "é:1", "tick"} {
			if err := tx.SetMeta(k, "v "+k); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			prefix string
			want   []string
		}{
			{"w:%a:", []string{"w:%a:1", "w:%a:2"}},
			{"w:", []string{"w:", "w:%a:1", "w:%a:2", "w:_b"}},
			{"w:_", []string{"w:_b"}},
			{"é:", []string{"é:1"}},
			{"none", nil},
		} {
			keys, values, err := tx.MetaPrefix(c.prefix)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(keys, c.want) || len(values) != len(keys) {
				t.Errorf("MetaPrefix(%q) = %q, %q; want keys %q", c.prefix, keys, values, c.want)
			}
			for i := range values {
				if values[i] != "v "+keys[i] {
					t.Errorf("MetaPrefix(%q): %q = %q", c.prefix, keys[i], values[i])
				}
			}
		}
		for _, k := range []string{"w:%a:1", "never-set"} {
			if err := tx.DeleteMeta(k); err != nil {
				return err
			}
		}
		if keys, _, err := tx.MetaPrefix("w:%"); err != nil || !reflect.DeepEqual(keys, []string{"w:%a:2"}) {
			t.Errorf("after DeleteMeta: %q, %v", keys, err)
		}
		if err := tx.DeleteMeta(tagKey); err == nil {
			t.Error("the instance tag was dropped")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Tx(ctx, func(tx *Tx) error {
		_, ok, err := tx.Meta(tagKey)
		if !ok {
			t.Error("no instance tag")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func TestEvents(t *testing.T) {
	st := openStore(t)
	at := time.Date(2025, 6, 1, 12, 0, 0, 5, time.UTC)
	var want []Event
	for i := 0; i < 6; i++ {
		e := Event{Session: []string{"1-aaaa", "2-aaaa", ""}[i%3], Actor: "a", Kind: "k" + strconv.Itoa(i), Message: fmt.Sprintf("line %d\nsecond line", i)}
		if i == 0 {
			e.At = at
		}
		if err := st.Log(ctx, e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	all, err := st.Events(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("Events = %d events, want 6", len(all))
	}
	for i, e := range all {
		w := want[i]
		if e.Seq != int64(i+1) || e.Session != w.Session || e.Kind != w.Kind || e.Message != w.Message || e.Actor != "a" || e.At.IsZero() {
			t.Errorf("event %d = %+v, want %+v", i, e, w)
		}
	}
	if !all[0].At.Equal(at) || all[0].At.Location() != time.UTC {
		t.Errorf("At = %v, want %v", all[0].At, at)
	}
	last, _ := st.Events(ctx, "", 2)
	if len(last) != 2 || last[0].Kind != "k4" || last[1].Kind != "k5" {
		t.Errorf("Events(\"\", 2) = %+v, want k4, k5", last)
	}
	one, _ := st.Events(ctx, "2-aaaa", 0)
	if len(one) != 2 || one[0].Kind != "k1" || one[1].Kind != "k4" {
		t.Errorf("Events(2-aaaa) = %+v, want k1, k4", one)
	}
	one, _ = st.Events(ctx, "1-aaaa", 1)
	if len(one) != 1 || one[0].Kind != "k3" {
		t.Errorf("Events(1-aaaa, 1) = %+v, want k3", one)
	}
}

// LogAll and SetPendingAll write what Log and SetPending one by one would: every row, in order,
// across their batches of rows (a tick at capacity defers a thousand firings at once), and an
// upsert that keeps the earlier time of a firing already pending.
func TestLogAllAndSetPendingAllAreTheOneByOneWrites(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)
	const n = 2*rowBatch + 7
	var es []Event
	var ps []PendingFiring
	want := map[string]time.Time{"kept": t0}
	for i := range n {
		key := fmt.Sprintf("actor%03d#0", i)
		es = append(es, Event{At: t0.Add(time.Duration(i) * time.Second), Actor: fmt.Sprintf("actor%03d", i), Kind: "deferred", Message: key})
		ps = append(ps, PendingFiring{Key: key, Since: t0.Add(time.Duration(i) * time.Minute)})
		want[key] = t0.Add(time.Duration(i) * time.Minute)
	}
	ps = append(ps, PendingFiring{Key: "kept", Since: t0.Add(time.Hour)}) // later than the one pending: kept
	err := st.Tx(ctx, func(tx *Tx) error {
		if err := tx.Log(Event{Kind: "before"}); err != nil {
			return err
		}
		if err := tx.SetPending("kept", t0); err != nil {
			return err
		}
		if err := tx.LogAll(es); err != nil {
			return err
		}
		if err := tx.LogAll(nil); err != nil {
			return err
		}
		if err := tx.SetPendingAll(nil); err != nil {
			return err
		}
		return tx.SetPendingAll(ps)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Events(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n+1 || got[0].Kind != "before" {
		t.Fatalf("%d events, the first %+v", len(got), got[0])
	}
	for i, e := range got[1:] {
		if e.Seq != got[0].Seq+int64(i)+1 || !e.At.Equal(es[i].At) || e.Actor != es[i].Actor || e.Kind != "deferred" || e.Message != es[i].Message {
			t.Fatalf("event %d = %+v, want %+v after seq %d", i, e, es[i], got[0].Seq)
		}
	}
	err = st.Tx(ctx, func(tx *Tx) error {
		p, err := tx.Pending()
		if err == nil && !reflect.DeepEqual(p, want) {
			t.Errorf("Pending has %d firings, want %d; kept = %v", len(p), len(want), p["kept"])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
