package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/internal/store"
)

// maxWaiting bounds runner list's WAITING FOR: one line, clipped; runner get shows the rest.
const maxWaiting = 120

// WaitingFor is what runner list shows under WAITING FOR, one line, clipped: for a session
// parked at an approval or an @elicit, its prompt; for a queued one, the session it waits for;
// for an open ask to a person (a human actor's session: a launch, ask_person, the code flow's
// review or maintainer's approval of a proposal), whom and what: "approver (a person): Approve
// or decline: …". "" when it waits for no one.
func (r *Runner) WaitingFor(ctx context.Context, s store.Session) string {
	return clipLine(r.Awaited(ctx, s), maxWaiting)
}

// Awaited is what WaitingFor shows, whole (runner list --format json's waitingFor).
func (r *Runner) Awaited(ctx context.Context, s store.Session) string {
	w := Waiting(s)
	if w == "" && s.Kind == "human" && !s.Status.Ended() && s.TokenHash != "" {
		w = s.Actor + " (a person): " + r.askWhat(ctx, s)
	}
	return w
}

// askWhat is what the open ask s asks of its person.
func (r *Runner) askWhat(ctx context.Context, s store.Session) string {
	if codeFlowAsk(s) {
		seq, _ := strconv.ParseInt(strings.TrimPrefix(s.Origin, "proposal:"), 10, 64)
		p, ok, err := r.Store.Proposal(ctx, seq)
		switch {
		case err != nil || !ok:
		case p.Ask == s.ID:
			return fmt.Sprintf("approve merging proposal %d of %s into %s; the operator answers (runner update ID --new-token)", p.Seq, p.Actor, p.Target)
		case p.Reviewer == s.ID:
			return fmt.Sprintf("review proposal %d of %s (head %s); the operator answers (runner update ID --new-token)", p.Seq, p.Actor, short(p.Head))
		}
		return s.Origin + "; the operator answers (runner update ID --new-token)"
	}
	if rec, err := readHandoff(ctx, r.Store, s.ID); err == nil && rec != nil {
		switch {
		case rec.Decision != nil && rec.Decision.Question != "":
			return rec.Type + ": " + rec.Decision.Question
		case rec.In != "":
			return rec.Type + ": " + rec.In
		}
	}
	// The launch's text (subject.text), under the param the actor forwards it as (hello-human's ASK).
	if cfg, err := r.In.Actor(s.Actor); err == nil {
		for _, p := range cfg.Params {
			if p.Source == "subject.text" && strings.TrimSpace(s.Params[p.Name]) != "" {
				return s.Params[p.Name]
			}
		}
	}
	if s.Ref != "" {
		return "an answer on " + s.Ref + " (runner get " + s.ID + ")"
	}
	return "an answer (runner get " + s.ID + ")"
}

// clipLine is s on one line (a line break or other control becomes a space) of at most n
// characters, the last one … when clipped.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(oneLine(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}

// NoSession says that the store holds no session id, and where the ids are: pasted from a
// command's help, ID is a placeholder.
func NoSession(id string) string {
	return fmt.Sprintf("no session %s (runner list shows the sessions and their ids)", id)
}
