package ir

import (
	"context"
	"errors"
)

// ErrUnsupported is wrapped by the error of a Runner verb (or transition) that the runner cannot
// realize at all, as opposed to one that does not apply to a session (false, nil): GitHub cannot
// pause a run, for instance. Callers test it with errors.Is.
var ErrUnsupported = errors.New("not supported by this runner")

// SessionStatus is where a session is in its life. A session starts running; it may be paused
// and resumed; it ends cancelled, done or failed, and an ended session never changes again.
type SessionStatus string

// The five session statuses of the Runner contract.
const (
	Running   SessionStatus = "running"
	Paused    SessionStatus = "paused"
	Cancelled SessionStatus = "cancelled"
	Done      SessionStatus = "done"
	Failed    SessionStatus = "failed"
)

// SessionStatuses lists the statuses in the standard's order.
var SessionStatuses = []SessionStatus{Running, Paused, Cancelled, Done, Failed}

// Ended reports whether s is a final status.
func (s SessionStatus) Ended() bool { return s == Cancelled || s == Done || s == Failed }

// LaunchParams are the params a launch forwards to the actor, by their opaque env names. The
// runner never interprets them and hands them back verbatim.
type LaunchParams map[string]string

// Session is one actor working one subject: what launch returns and list shows.
type Session struct {
	// ID is received from the runner, never invented by the caller, and never reused.
	ID     string        `json:"id"`
	Agent  string        `json:"agent"`
	Status SessionStatus `json:"status"`
	// Ref is the subject the session works on (subject.ref), when there is one.
	Ref    string       `json:"ref,omitempty"`
	Params LaunchParams `json:"params,omitempty"`
	// Reason is why the session ended as it did (failed, cancelled), when the runner knows.
	Reason string `json:"reason,omitempty"`
	// Token is the one-time redeem token of a parked ask (a human session): set only on the
	// session Launch returns, never stored or listed. Update with it and the evidence completes
	// the ask.
	Token string `json:"token,omitempty"`
}

// Patch is a status transition asked of Update, with what a verified completion carries.
type Patch struct {
	Status SessionStatus
	// Token and Evidence complete a human session: the one-time redeem token its launch returned,
	// and the verified act that resolved the ask.
	Token    string
	Evidence string
	// Choice and Answer are what the receiver of a typed ask hands back: one of its decision's
	// options, and its out (package handoff); an untyped ask takes neither.
	Choice, Answer string
}

// Runner is the one seam through which actors are launched, observed and stopped, whatever
// realizes them: a local process, a parked ask to a person, a GitHub workflow run.
type Runner interface {
	// Launch starts (or, for a person, engages) an actor and returns its running session.
	Launch(ctx context.Context, agent string, params LaunchParams) (Session, error)
	// Get returns one session; ok is false when the runner knows no session id.
	Get(ctx context.Context, id string) (s Session, ok bool, err error)
	// List returns the sessions in flight (running or paused).
	List(ctx context.Context) ([]Session, error)
	// Update applies a status transition; false when the transition does not apply.
	Update(ctx context.Context, id string, patch Patch) (bool, error)
	// Cancel stops a session (retracts an ask); false when it had already ended or is unknown.
	Cancel(ctx context.Context, id string) (bool, error)
}
