package local

import (
	"context"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/internal/store"
)

// The code flow's asks (a person reviewing a proposal, a maintainer approving a change to
// human-required paths) let the runner merge into the target branch, so they are the
// operator's alone. Their one-time token is written nowhere a session can read (a session's log
// is readable by every sandbox of the same user): the operator gets one on their own terminal
// with NewAskToken (autonomy runner update ASK --new-token), and only the operator, never a
// process inside a session, may resolve them.

// codeFlowAsk says whether s is an ask the code flow engaged for a proposal.
func codeFlowAsk(s store.Session) bool {
	return s.Kind == "human" && strings.HasPrefix(s.Origin, "proposal:")
}

// operatorsAsk refuses a caller other than the operator the code flow's ask s.
func (r *Runner) operatorsAsk(ctx context.Context, s store.Session) error {
	if r.caller == nil || !codeFlowAsk(s) {
		return nil
	}
	return r.caller.deny(ctx, fmt.Sprintf("session %s is the code flow's ask (%s): only the operator resolves it, from outside every session (autonomy runner update %s --new-token, then --status done --token TOKEN --evidence WHAT-YOU-CHECKED)", s.ID, s.Origin, s.ID))
}

// NewAskToken gives the operator a new one-time redeem token for the code flow's open ask id,
// which the runner tells no one else; the token it had before no longer redeems it. Sessions are
// refused, and so are asks the code flow did not engage (their token went to whoever launched
// them).
func (r *Runner) NewAskToken(ctx context.Context, id string) (string, error) {
	s, ok, err := r.Store.Get(ctx, id)
	if err != nil {
		return "", err
	}
	if r.caller != nil {
		return "", r.caller.deny(ctx, "a new ask token is the operator's: run it from outside every session")
	}
	switch {
	case !ok:
		return "", &RefusedError{Msg: NoSession(id)}
	case !codeFlowAsk(s):
		return "", &RefusedError{Msg: fmt.Sprintf("session %s is not an ask of the code flow (a proposal's review or approval): its token was returned by its launch", id)}
	case s.Status.Ended():
		return "", &RefusedError{Msg: fmt.Sprintf("session %s already ended %s; it never changes again", id, s.Status)}
	}
	return r.asks.reissue(ctx, s)
}

// tellOperator says in the proposer's log (runner logs ID) that the proposal waits for the
// code flow's ask, and how the operator resolves it; the token is not in it.
func (f *flow) tellOperator(ask, what string) {
	path, ok := f.r.In.logPath(f.p.Session)
	if !ok {
		return
	}
	l, err := openCappedLog(path, f.r.In.logMax())
	if err != nil {
		return
	}
	defer l.Close()
	fmt.Fprintf(l, "autonomy: proposal %d %s: the operator gets a one-time token with autonomy runner update %s --new-token, and approves with autonomy runner update %s --status done --token TOKEN --evidence WHAT-YOU-CHECKED (--status failed declines)\n",
		f.p.Seq, what, ask, ask)
}
