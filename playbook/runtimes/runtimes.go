// Package runtimes is the playbook runtimes as a runner that hosts them in-process needs them: it
// weaves an installation's overlays into a session's skill (playbook.WeaveInstall), names the
// step a paused workflow or step playbook run waits at, applies a person's answer to a paused
// step playbook run (stepsrun.Apply) and says where a step playbook checkpoint continues
// (stepsrun.NextStep). A substrate never imports playbook: the layer above one (its command
// package, tests) passes Host{} to the runner, which declares what it needs as an interface of
// its own (local.PlaybookHost) over the neutral protocol types of internal/playproto.
package runtimes

import (
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/engine"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// Host is the playbook runtimes of this build, for a runner to host. Its zero value is ready.
type Host struct{}

// Weave applies the overlay package of the installation in dir (its weaving config in dataDir)
// to skill for actor, at now; ok is false, and the skill unchanged, without a weaving config.
func (Host) Weave(dir, dataDir string, actor playproto.Actor, skill string, now time.Time) (playproto.Weaving, bool, error) {
	return playbook.WeaveInstall(dir, dataDir, actor, skill, now)
}

// PausedStep names the step the paused run raw waits at: a step playbook's elicitation, else a
// workflow's approval; "" when raw names none.
func (Host) PausedStep(raw []byte) string {
	if playproto.IsStepsState(raw) {
		if w := stepsrun.Waiting(raw); w != nil {
			return w.Step
		}
	}
	return engine.PausedStep(raw)
}

// Answer records a in the paused step playbook run raw and returns the state to continue; an
// answer that does not fit the elicitation is an error saying why.
func (Host) Answer(raw []byte, a playproto.Answer) ([]byte, error) {
	return stepsrun.Apply(raw, a)
}

// NextStep is the label of the step the step playbook checkpoint raw continues at, "" when
// every step is recorded or raw is no step playbook's (stepsrun.NextStep).
func (Host) NextStep(raw []byte) string { return stepsrun.NextStep(raw) }
