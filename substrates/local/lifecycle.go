package local

import (
	"context"
	"fmt"
	"io"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// A capsule playbook's life cycle (seed 000) decides what a new run of an agent whose behavior
// it is follows: a superseded playbook's new runs follow its successor (compile installs the
// successor and points the launcher config's behavior at it; each session's log says so), an
// archived one starts no new run (compile schedules none of its cron triggers, and Launch
// refuses, saying why). Sessions already running are not touched.

// lifecycle records the actor's behavior's life cycle in cfg: a superseded behavior is replaced
// by its successor; an archived one draws a warning.
func (c *compiler) lifecycle(a *ir.Actor, cfg *ActorConfig) {
	lc := c.r.Behavior(a).Lifecycle
	if lc == nil {
		return
	}
	cfg.Lifecycle = lc
	switch {
	case lc.Status == "superseded":
		cfg.Behavior = dataDir + "/" + lc.Successor
	case len(a.Triggers) > 0:
		c.warnings = append(c.warnings, ir.Diagnostic{File: c.p.File, Pos: a.Behavior.Pos, Severity: ir.Warning,
			Message: fmt.Sprintf("actor %q: %s; launches are refused and its cron triggers are not scheduled", a.Name.Value, lc.Reason),
			Hint:    "point behavior: at the playbook that replaced it, or remove the actor"})
	}
}

// archived reports whether no new run of the actor may start.
func (cfg *ActorConfig) archived() bool {
	return cfg.Lifecycle != nil && cfg.Lifecycle.Status == "archived"
}

// refuseArchived refuses a new run of an actor whose behavior is archived.
func refuseArchived(cfg *ActorConfig) error {
	if !cfg.archived() {
		return nil
	}
	return &RefusedError{Msg: fmt.Sprintf("actor %q: %s (point behavior: at the playbook that replaced it and compile again)", cfg.Actor, cfg.Lifecycle.Reason)}
}

// logSuccessor says, in the session's log and as a "superseded" event, that the session follows
// its behavior's successor.
func (r *Runner) logSuccessor(ctx context.Context, s store.Session, cfg *ActorConfig, log io.Writer) {
	lc := cfg.Lifecycle
	if lc == nil || lc.Status != "superseded" {
		return
	}
	msg := fmt.Sprintf("the behavior is superseded (status: superseded at %s): this run follows its successor %s (%s)", lc.At, lc.Successor, lc.Chain)
	fmt.Fprintln(log, "autonomy: "+msg)
	_ = r.Store.Log(ctx, store.Event{Session: s.ID, Actor: s.Actor, Kind: "superseded", Message: msg})
}
