package localcmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// eventsShown is how many of a session's most recent events `runner get` shows.
const eventsShown = 20

// eventView is one event of a session's audit log, as `runner get` shows it.
type eventView struct {
	At      string `json:"at"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// sessionEvents reads the most recent events of a session (queued, worktree, orphaned, ended, …),
// oldest first, and whether earlier ones were left out; none when the audit log cannot be read.
func sessionEvents(ctx context.Context, r *local.Runner, id string) ([]eventView, bool) {
	events, err := r.Store.Events(ctx, id, eventsShown+1)
	if err != nil {
		return []eventView{}, false
	}
	more := len(events) > eventsShown
	if more {
		events = events[1:]
	}
	views := make([]eventView, 0, len(events))
	for _, e := range events {
		views = append(views, eventView{At: e.At.UTC().Format(time.RFC3339Nano), Kind: e.Kind, Message: e.Message})
	}
	return views, more
}

// printEvents adds the events of a session to `runner get`.
func printEvents(w io.Writer, events []eventView, more bool) {
	if len(events) == 0 {
		return
	}
	fmt.Fprintln(w, "events:")
	if more {
		fmt.Fprintf(w, "  (the last %d; earlier ones are in the store's events table)\n", eventsShown)
	}
	for _, e := range events {
		fmt.Fprintf(w, "  %s  %s  %s\n", e.At, cliout.TerminalSafe(e.Kind), cliout.TerminalSafe(e.Message))
	}
}
