package local

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// Engager tells a person about an ask and takes it back: the human runner's swappable channel.
// The runner never depends on how a person is reached; it records the ask either way, and an
// engage failure is reported without losing the ask.
type Engager interface {
	Engage(ctx context.Context, s store.Session, cfg *ActorConfig) error
	Retract(ctx context.Context, s store.Session) error
}

// asks is the human runner: it parks an ask to a person, resolves it with its one-time redeem
// token and the evidence of the act, and tells people of asks through its Engager.
type asks struct {
	store   *store.Store
	engager Engager
	// now is the clock; by names who acts (the caller) in the records.
	now func() time.Time
	by  func() string
}

// engage parks an ask: a running session holding the params, with a one-time redeem token of
// which only the hash is kept.
func (h *asks) engage(ctx context.Context, cfg *ActorConfig, s store.Session) (LaunchResult, error) {
	return h.engageTyped(ctx, cfg, s, nil, nil)
}

// engageTyped parks an ask carrying its typed handoff (nil: an untyped ask, as before types);
// keep, when set, keeps the token for the person before they are told (no launcher holds it).
func (h *asks) engageTyped(ctx context.Context, cfg *ActorConfig, s store.Session, spec *handoff.Spec, keep func(store.Session, string) error) (LaunchResult, error) {
	token, err := newAskToken()
	if err != nil {
		return LaunchResult{}, err
	}
	s.Status = ir.Running
	s.TokenHash = hashToken(token)
	s.CreatedAt = h.now().UTC()
	s.StartedAt = s.CreatedAt
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Insert(&s); err != nil {
			return err
		}
		if err := keepHandoff(tx, s, spec); err != nil {
			return err
		}
		if err := scheduleSim(tx, s, spec, token); err != nil {
			return err
		}
		return tx.Log(store.Event{Session: s.ID, Actor: s.Actor, Kind: "engaged", Message: "ask engaged by " + engagedBy(s, h.by()) + typeNote(spec)})
	})
	if err != nil {
		return LaunchResult{}, err
	}
	if keep != nil {
		if err := keep(s, token); err != nil {
			return LaunchResult{Session: s}, err
		}
	}
	if err := h.engager.Engage(ctx, s, cfg); err != nil {
		_ = h.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "engage-failed", Message: err.Error()})
		return LaunchResult{Session: s, Token: token}, fmt.Errorf("the ask %s is recorded, but telling a person failed: %v", s.ID, err)
	}
	return LaunchResult{Session: s, Token: token}, nil
}

// engagedBy names who engaged the ask s for its engaged event: its origin when the runner
// engaged it on its own account (the code flow for a proposal: "proposal:1"), or a session for
// another (a capsule's reviewer), rather than by, the caller of the process that recorded it.
func engagedBy(s store.Session, by string) string {
	switch {
	case strings.HasPrefix(s.Origin, "proposal:"):
		return "the code flow for proposal " + strings.TrimPrefix(s.Origin, "proposal:") + " (origin " + s.Origin + ")"
	case strings.HasPrefix(s.Origin, "session:") && !strings.HasPrefix(by, "session "+strings.TrimPrefix(s.Origin, "session:")+" "):
		return "session " + strings.TrimPrefix(s.Origin, "session:") + " (origin " + s.Origin + ")"
	}
	return by
}

// newAskToken is a fresh one-time redeem token for an ask.
func newAskToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	return "atk_" + base64.RawURLEncoding.EncodeToString(raw), nil
}

// reissue gives the open ask s a new one-time redeem token and returns it: the token it had
// before no longer redeems it. Only the hash is kept.
func (h *asks) reissue(ctx context.Context, s store.Session) (string, error) {
	token, err := newAskToken()
	if err != nil {
		return "", err
	}
	n, changed, err := h.store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) {
		m.TokenHash = hashToken(token)
	})
	if err != nil {
		return "", err
	}
	if !changed {
		return "", &RefusedError{Msg: fmt.Sprintf("session %s was resolved or retracted meanwhile (%s)", s.ID, n.Status)}
	}
	_ = h.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "token", Message: "a new redeem token was given to " + h.by() + "; the one before no longer redeems it"})
	return token, nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// resolve completes an ask. Only done or failed (the person declined) apply, and only with
// the redeem token and the evidence of the verified act; anything less changes nothing.
func (h *asks) resolve(ctx context.Context, s store.Session, p ir.Patch) (store.Session, error) {
	return h.resolveAs(ctx, s, p, h.by())
}

// resolveAs is resolve by a redeemer the runner names: the caller, or the human simulator.
func (h *asks) resolveAs(ctx context.Context, s store.Session, p ir.Patch, by string) (store.Session, error) {
	if p.Status != ir.Done && p.Status != ir.Failed {
		return s, &RefusedError{Msg: fmt.Sprintf("session %s is an ask to a person: it can be resolved (done or failed, with its token and evidence) or cancelled, not %s", s.ID, p.Status)}
	}
	if p.Token == "" {
		return s, h.refuse(ctx, s, "refused: resolving an ask needs its one-time redeem token (--token): the one "+tokenWhere(s))
	}
	rec, err := readHandoff(ctx, h.store, s.ID)
	if err != nil {
		return s, err
	}
	if strings.TrimSpace(p.Evidence) == "" && (rec == nil || rec.Type != handoff.Inform) {
		return s, h.refuse(ctx, s, "refused: resolving an ask needs --evidence: the verified act that resolved it (a merged change, an approval's URL, the check that passed)")
	}
	if !redeems(s, p.Token) {
		if strings.ContainsAny(p.Token, `/\`) || strings.HasSuffix(p.Token, ".token") {
			// The token file's path, given for the token.
			return s, h.refuse(ctx, s, fmt.Sprintf("refused: --token takes the token itself, not the file that holds it: --token \"$(cat %s)\"", cliout.ShellWord(p.Token)))
		}
		return s, h.refuse(ctx, s, "refused: the token does not redeem this ask: give the one "+tokenWhere(s))
	}
	reply, err := replyFor(rec, s, p)
	if err != nil {
		return s, h.refuse(ctx, s, "refused: "+err.Error()+"; the token stays valid")
	}
	if p.Evidence == "" {
		p.Evidence = "receipt confirmed"
	}
	now := h.now().UTC()
	n, changed, err := h.store.Modify(ctx, s.ID, []ir.SessionStatus{ir.Running, ir.Paused}, func(m *store.Session) {
		if m.TokenHash != s.TokenHash {
			return // redeemed meanwhile by another process: the check below refuses
		}
		m.Status, m.EndedAt, m.TokenHash = p.Status, now, ""
		m.Evidence, m.ResolvedBy = p.Evidence, by
		m.Verified = "redeem token and evidence, applied by " + by + " at " + now.Format("2006-01-02T15:04:05Z")
	})
	if err != nil {
		return n, err
	}
	if !changed || n.Status != p.Status {
		return n, &RefusedError{Msg: fmt.Sprintf("refused: session %s was resolved or retracted meanwhile (%s)", s.ID, n.Status)}
	}
	if err := h.recordReply(ctx, rec, n, reply, by, now); err != nil {
		return n, err
	}
	_ = h.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "resolved", Message: fmt.Sprintf("%s by %s: %s%s", p.Status, by, p.Evidence, replyNote(reply))})
	return n, h.engager.Retract(ctx, n)
}

// refuse records a refused resolution of an ask and returns it as a *RefusedError.
func (h *asks) refuse(ctx context.Context, s store.Session, msg string) error {
	_ = h.store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "refused", Message: msg + " (by " + h.by() + ")"})
	return &RefusedError{Msg: msg}
}

// AttentionFile is the default engage backend: .autonomy/state/attention.md lists every open
// ask, rewritten whole (atomically) on each change, for a person to read or a notifier to watch.
type AttentionFile struct {
	Path  string
	Store *store.Store
	// In is the installation, to name each actor's task spec.
	In *Install
}

// Engage rewrites the list with the new ask.
func (a *AttentionFile) Engage(ctx context.Context, _ store.Session, _ *ActorConfig) error {
	return a.rewrite(ctx)
}

// Retract rewrites the list without the ask, and removes its spent token the runner kept.
func (a *AttentionFile) Retract(ctx context.Context, s store.Session) error {
	if err := os.Remove(a.In.TokenFile(s.ID)); err != nil && !os.IsNotExist(err) {
		return err
	}
	return a.rewrite(ctx)
}

func (a *AttentionFile) rewrite(ctx context.Context) error {
	ss, err := a.Store.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("# Waiting on a person\n\nWritten by the autonomy runner; every open ask, oldest first. Resolve one with\n`autonomy runner update ID --status done --token TOKEN --evidence \"what was verified\"`\n(the token was returned once, by the launch; the operator gets one for the code flow's asks with\n`autonomy runner update ID --new-token`), or retract it with `autonomy runner cancel ID`.\n")
	n := 0
	for _, s := range ss {
		if s.Kind != "human" {
			continue
		}
		n++
		fmt.Fprintf(&b, "\n## %s — %s\n\n- asked: %s by %s\n", s.ID, s.Actor, s.CreatedAt.Format("2006-01-02 15:04 UTC"), s.Origin)
		if s.Ref != "" {
			fmt.Fprintf(&b, "- subject: %s\n", s.Ref)
		}
		if cfg, err := a.In.Actor(s.Actor); err == nil {
			fmt.Fprintf(&b, "- task spec: %s\n", cfg.Behavior)
		}
		b.WriteString(handoffLines(ctx, a.Store, a.In, s))
		if codeFlowAsk(s) {
			fmt.Fprintf(&b, "- token: the operator's only, printed by `autonomy runner update %s --new-token`\n", s.ID)
		}
		b.WriteString(escalationLine(ctx, a.Store, s))
		for _, k := range sortedKeys(s.Params) {
			v := s.Params[k]
			if v == "" {
				continue
			}
			fmt.Fprintf(&b, "- %s: %s\n", k, quoteLine(v))
		}
	}
	if n == 0 {
		b.WriteString("\nNothing is waiting.\n")
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.Path), ".attention-*.md")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), a.Path)
}

// quoteLine keeps a param value on one markdown line: text anyone wrote must not forge entries.
func quoteLine(v string) string {
	r := strings.NewReplacer("\r", `\r`, "\n", `\n`, "`", "'")
	return "`" + r.Replace(v) + "`"
}

// tokenWhere says where the token of ask s is: what its launch printed, the file the runner
// wrote it to for an ask a session made (whose launch the operator never saw), and for the code
// flow's ask a new one.
func tokenWhere(s store.Session) string {
	if codeFlowAsk(s) {
		return fmt.Sprintf("printed by autonomy runner update %s --new-token (the code flow's ask: it replaces the one before)", s.ID)
	}
	return fmt.Sprintf("its launch printed, or, for an ask a session made, the one in %s under the installation (readable by you only)", filepath.ToSlash(filepath.Join(AskDir, s.ID+".token")))
}
