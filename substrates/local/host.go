package local

import (
	"errors"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
)

// PlaybookHost is what the local runner needs of the playbook runtimes it hosts: weaving the
// installation's overlays into an agent session's skill, naming the step a paused run waits at,
// answering a paused step playbook run, and where a step playbook's checkpoint continues. The
// runner does not import playbook (a substrate never does: the arrows point down, and what
// both sides exchange is internal/playproto's); the layer that builds a Runner (localcmd, its
// probe targets, tests) injects the implementation, playbook/runtimes.Host, in Options.Playbooks or
// Substrate.Playbooks. A runner built without one runs every session that needs none (agents
// without overlays, scripts, people, a workflow's or step playbook's own process) and refuses
// the rest with ErrNoPlaybookHost instead of panicking.
type PlaybookHost interface {
	// Weave applies the overlay package of the installation in dir (its weaving config in
	// dataDir) to skill for actor at now; ok is false, the skill unchanged, without a config.
	Weave(dir, dataDir string, actor playproto.Actor, skill string, now time.Time) (w playproto.Weaving, ok bool, err error)
	// PausedStep names the step the paused run raw waits at ("" when it names none).
	PausedStep(raw []byte) string
	// Answer records a in the paused step playbook run raw and returns the state to continue;
	// an answer that does not fit is an error saying why.
	Answer(raw []byte, a playproto.Answer) ([]byte, error)
	// NextStep is the label of the step the step playbook checkpoint raw continues at.
	NextStep(raw []byte) string
}

// ErrNoPlaybookHost is the refusal of a runner built without a PlaybookHost asked for what
// only the playbook runtimes can do.
var ErrNoPlaybookHost = errors.New("this runner was built without playbook support (local.Options.Playbooks is nil): it cannot weave overlays nor answer or continue a paused playbook run; run it through the autonomy command, or pass playbook/runtimes.Host{}")
