package store

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// BenchmarkList100k lists the sessions in flight, and an actor's, among 100,000 stored sessions
// of which 10 are running: what every launch, tick and `list` pays once a runner has run for
// long. The database is built once, for all the sub-benchmarks.
func BenchmarkList100k(b *testing.B) {
	const total, running = 100_000, 10
	st := openAt(b, filepath.Join(b.TempDir(), "state.db"))
	const batch = 10_000
	for start := 0; start < total; start += batch {
		err := st.Tx(ctx, func(tx *Tx) error {
			for i := start; i < start+batch; i++ {
				s := Session{Actor: "actor-" + strconv.Itoa(i%20), Kind: "agent", Status: ir.Done, Trigger: "cron", Origin: "schedule",
					Params: ir.LaunchParams{"SUBJECT": "issue " + strconv.Itoa(i)}, Reason: "exit 0"}
				if i%(total/running) == 0 {
					s.Status = ir.Running
				}
				if err := tx.Insert(&s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		opts ListOptions
		want int
	}{
		{"in-flight", ListOptions{}, running},
		{"actor-in-flight", ListOptions{Actor: "actor-0"}, running},
		{"all-last-50", ListOptions{All: true, Limit: 50}, 50},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ss, err := st.List(ctx, c.opts)
				if err != nil || len(ss) != c.want {
					b.Fatalf("List(%+v) = %d sessions, %v; want %d", c.opts, len(ss), err, c.want)
				}
			}
		})
	}
	b.Run("active", func(b *testing.B) {
		for b.Loop() {
			err := st.Tx(ctx, func(tx *Tx) error {
				_, err := tx.Active("agent")
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInsert is one launch's write: one Insert in a transaction of its own, sustained.
func BenchmarkInsert(b *testing.B) {
	st := openStore(b)
	for b.Loop() {
		insert(b, st, Session{Actor: "worker", Kind: "agent", Trigger: "dispatch", Origin: "operator", Params: ir.LaunchParams{"X": "1"}})
	}
}

// BenchmarkInsertModify is a session's two commits on the launch path: it is recorded, then
// its supervisor writes the pids.
func BenchmarkInsertModify(b *testing.B) {
	st := openStore(b)
	for b.Loop() {
		s := insert(b, st, Session{Actor: "worker", Kind: "agent", Trigger: "dispatch", Origin: "operator", Params: ir.LaunchParams{"X": "1"}})
		_, ok, err := st.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running}, func(m *Session) {
			m.PID, m.PIDStart, m.StartedAt = 1234, 5678, now()
		})
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkOpen opens an existing, up-to-date database and closes it: what every autonomy
// process that touches the store pays once, twice per launch (the CLI and the session's
// supervisor). Its first statement reads and parses the schema.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	st, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	st.Close()
	for b.Loop() {
		st, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := st.Get(ctx, "1-aaaa"); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}
