package local

import (
	"context"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// playbooks runs the sessions of playbook behaviors (workflow and step playbooks, capsule
// methods): their commands, the envelope their process prints, the pauses that park them
// (approvals, answers, sign-offs, reviews), and the continuation of a parked or orphaned run
// (workflow.go, steps.go, capsule.go, resume.go). Their state is the store's pauses; what they
// need of the runner's other parts is ctl.
type playbooks struct {
	in     *Install
	store  *store.Store
	caller *caller
	now    func() time.Time
	// exe is the autonomy binary a workflow session runs ("" for this one).
	exe string
	// env is the environment sessions inherit.
	env []string
	// host is the playbook runtimes (nil: refuse what needs them with ErrNoPlaybookHost).
	host PlaybookHost
	ctl  sessionControl
}

// sessionControl is what the playbook sessions need of the runner: to start, launch, cancel and
// end sessions.
type sessionControl interface {
	start(ctx context.Context, s store.Session) error
	launchAs(ctx context.Context, req LaunchRequest, origin string) (LaunchResult, error)
	Cancel(ctx context.Context, id string) (bool, error)
	end(ctx context.Context, id string, status ir.SessionStatus, reason, verified string, code *int, stopBy time.Time) (bool, error)
	reclaim(ctx context.Context, s store.Session)
}

// playbooks is the playbook side of r.
func (r *Runner) playbooks() *playbooks {
	return &playbooks{in: r.In, store: r.Store, caller: r.caller, now: r.opts.Now, exe: r.opts.Exe, env: r.opts.Env, host: r.opts.Playbooks, ctl: r}
}

// Approve answers a workflow session's approval, or a capsule's sign-off, with its token.
func (r *Runner) Approve(ctx context.Context, id, token string, approve bool, evidence string) (store.Session, error) {
	return r.playbooks().approve(ctx, id, token, approve, evidence)
}

// Respond answers a step playbook's elicitation with its token.
func (r *Runner) Respond(ctx context.Context, id, token string, a playproto.Answer, evidence string) (store.Session, error) {
	return r.playbooks().respond(ctx, id, token, a, evidence)
}
