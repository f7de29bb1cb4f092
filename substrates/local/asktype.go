package local

import (
	"context"
	"crypto/subtle"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The typed handoff of an ask (package handoff) is kept in the store's meta, beside the ask's
// session: "asks.handoff.<id>" holds its handoff.Record, JSON. An ask launched without a type
// has none and resolves as before types.

func handoffKey(id string) string { return "asks.handoff." + id }

// keepHandoff records the typed handoff of the ask s, in the transaction that inserts it.
func keepHandoff(tx *store.Tx, s store.Session, spec *handoff.Spec) error {
	if spec == nil {
		return nil
	}
	rec := handoff.Record{Spec: *spec}
	return tx.SetMeta(handoffKey(s.ID), rec.Encode())
}

func typeNote(spec *handoff.Spec) string {
	if spec == nil {
		return ""
	}
	return " (type " + spec.Type + ")"
}

// readHandoff is the typed handoff of ask id (nil for an untyped ask).
func readHandoff(ctx context.Context, st *store.Store, id string) (*handoff.Record, error) {
	var raw string
	var ok bool
	err := st.Tx(ctx, func(tx *store.Tx) (err error) {
		raw, ok, err = tx.Meta(handoffKey(id))
		return err
	})
	if err != nil || !ok {
		return nil, err
	}
	rec, err := handoff.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("ask %s: %v", id, err)
	}
	return rec, nil
}

// Handoff is the typed handoff of ask id, with what came back (nil for an untyped ask or an
// agent's session).
func (r *Runner) Handoff(ctx context.Context, id string) (*handoff.Record, error) {
	return readHandoff(ctx, r.Store, id)
}

// redeems reports whether token redeems the open ask s.
func redeems(s store.Session, token string) bool {
	return s.TokenHash != "" && subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(s.TokenHash)) == 1
}

// replyFor checks what a resolution hands back against the ask's type. An approval's choice
// follows its status when not given (done approves, failed rejects) and must agree with it; an
// inform is only confirmed (done); an untyped ask takes no choice or answer.
func replyFor(rec *handoff.Record, s store.Session, p ir.Patch) (handoff.Reply, error) {
	reply := handoff.Reply{Choice: p.Choice, Answer: p.Answer}
	if rec == nil {
		if reply != (handoff.Reply{}) {
			return reply, fmt.Errorf("ask %s has no type, so it takes no --choice or --reply", s.ID)
		}
		return reply, nil
	}
	switch {
	case rec.Type == handoff.Inform && p.Status != ir.Done:
		return reply, fmt.Errorf("an inform ask is only confirmed: --status done")
	case rec.Type == handoff.Approve && rec.Decision == nil || rec.Type == handoff.Approve && len(rec.Decision.Options) == 0:
		want := map[ir.SessionStatus]string{ir.Done: "approve", ir.Failed: "reject"}[p.Status]
		if reply.Choice == "" {
			reply.Choice = want
		}
		if reply.Choice != want {
			return reply, fmt.Errorf("--choice %s disagrees with --status %s (done approves, failed rejects)", reply.Choice, p.Status)
		}
	}
	return reply, rec.Check(reply)
}

// recordReply keeps what the receiver handed back, who (as verified) and when; the resolution
// confirms receipt when no confirmation came before.
func (h *asks) recordReply(ctx context.Context, rec *handoff.Record, s store.Session, reply handoff.Reply, by string, now time.Time) error {
	if rec == nil {
		return nil
	}
	rec.Reply, rec.By, rec.At = reply, by, now
	if rec.ConfirmedBy == "" {
		rec.ConfirmedBy, rec.ConfirmedAt = by, now
	}
	return h.store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(handoffKey(s.ID), rec.Encode()) })
}

func replyNote(r handoff.Reply) string {
	out := ""
	if r.Choice != "" {
		out += fmt.Sprintf(" (choice %q)", r.Choice)
	}
	if r.Answer != "" {
		out += fmt.Sprintf(" (answer %q)", r.Answer)
	}
	return out
}

// Confirm records that the receiver of ask id received it, with its redeem token, which stays
// valid for the resolution: the closed loop of the standard's handoff (receiver confirmation).
// A confirmation already recorded stands; a wrong token changes nothing.
func (r *Runner) Confirm(ctx context.Context, id, token string) (*handoff.Record, error) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ok || s.Kind != "human" {
		return nil, &RefusedError{Msg: fmt.Sprintf("no ask %s", id)}
	}
	rec, err := readHandoff(ctx, r.Store, id)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, &RefusedError{Msg: fmt.Sprintf("ask %s has no type: there is no handoff to confirm; resolve it", id)}
	}
	if s.Status.Ended() || !redeems(s, token) {
		return nil, r.asks.refuse(ctx, s, "refused: the token does not redeem this open ask")
	}
	if rec.ConfirmedBy != "" {
		return rec, nil
	}
	rec.ConfirmedBy, rec.ConfirmedAt = r.asks.by(), r.asks.now().UTC()
	err = r.Store.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.SetMeta(handoffKey(id), rec.Encode()); err != nil {
			return err
		}
		return tx.Log(store.Event{Session: id, Actor: s.Actor, Kind: "confirmed", Message: "received by " + rec.ConfirmedBy})
	})
	return rec, err
}

// checkHandoff refuses a typed handoff on an agent's launch, and one that is not valid.
func checkHandoff(cfg *ActorConfig, spec *handoff.Spec) error {
	if spec == nil {
		return nil
	}
	if cfg.Kind != "human" {
		return &RefusedError{Msg: fmt.Sprintf("actor %q is an agent: an ask's type and handoff (--type, --in, --option, --out) are for a person", cfg.Actor)}
	}
	if err := spec.Validate(); err != nil {
		return &RefusedError{Msg: "the ask's handoff: " + err.Error()}
	}
	return nil
}

// handoffLines are the attention file's lines of a typed ask: its type and payload, and where
// its token is kept when the runner keeps it (an ask_person's).
func handoffLines(ctx context.Context, st *store.Store, in *Install, s store.Session) string {
	var b strings.Builder
	if rec, err := readHandoff(ctx, st, s.ID); err == nil && rec != nil {
		fmt.Fprintf(&b, "- type: %s\n", rec.Type)
		if rec.In != "" {
			fmt.Fprintf(&b, "- in: %s\n", quoteLine(rec.In))
		}
		if d := rec.Decision; d != nil && d.Question != "" {
			fmt.Fprintf(&b, "- question: %s\n", quoteLine(d.Question))
		}
		for _, o := range rec.Options() {
			fmt.Fprintf(&b, "- option: %s\n", quoteLine(o))
		}
		if rec.Out != "" {
			fmt.Fprintf(&b, "- hand back: %s\n", quoteLine(rec.Out))
		}
	}
	if _, err := os.Stat(in.TokenFile(s.ID)); err == nil {
		fmt.Fprintf(&b, "- token: in %s (readable by you only)\n", filepath.ToSlash(filepath.Join(AskDir, s.ID+".token")))
	}
	return b.String()
}
