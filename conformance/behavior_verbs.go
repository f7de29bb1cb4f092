package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

// controllerActor holds agent:list, agent:update and agent:cancel, and not agent:launch.
const controllerActor = "controller"

// checkVerbs calls the runner from inside sessions: one of probe (no agent capability) is
// refused list, update and cancel, and changes nothing; one of the controller (agent:list,
// agent:update, agent:cancel) lists, pauses, resumes and cancels.
func checkVerbs(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.AsSession == nil {
		return NotProbed, s.NotProbed, ""
	}
	bare, err := launch(ctx, s, s.Actor)
	if err != nil {
		return Fail, err.Error(), ""
	}
	ctl, err := launch(ctx, s, controllerActor)
	if err != nil {
		return Fail, err.Error(), ""
	}
	asBare, err := s.AsSession(ctx, bare.ID)
	if err != nil {
		return Fail, fmt.Sprintf("calling the runner from session %s: %v", bare.ID, err), ""
	}
	if err := refusedVerbs(ctx, s, asBare, ctl.ID); err != nil {
		return Fail, fmt.Sprintf("from a session of %s (no agent capability): %v", s.Actor, err), ""
	}
	asCtl, err := s.AsSession(ctx, ctl.ID)
	if err != nil {
		return Fail, fmt.Sprintf("calling the runner from session %s: %v", ctl.ID, err), ""
	}
	if err := grantedVerbs(ctx, s, asCtl, bare.ID); err != nil {
		return Fail, fmt.Sprintf("from a session of %s (agent:list, agent:update, agent:cancel): %v", controllerActor, err), ""
	}
	return Supported, "", fmt.Sprintf("a session of %s (no agent capability) was refused list, get, update and cancel, which changed nothing; a session of %s (agent:list, agent:update, agent:cancel) listed, paused, resumed and cancelled", s.Actor, controllerActor)
}

// refusedVerbs checks that r refuses list, get, update and cancel, and that target is still
// running as the operator sees it.
func refusedVerbs(ctx context.Context, s *Subject, r ir.Runner, target string) error {
	if ss, err := r.List(ctx); err == nil {
		return fmt.Errorf("list was not refused: it showed %d sessions", len(ss))
	}
	if _, found, err := r.Get(ctx, target); err == nil && found {
		return fmt.Errorf("get %s was not refused", target)
	}
	if applied, err := r.Update(ctx, target, ir.Patch{Status: ir.Paused}); err == nil && applied {
		return fmt.Errorf("update %s to paused was not refused", target)
	}
	if ok, err := r.Cancel(ctx, target); err == nil && ok {
		return fmt.Errorf("cancel %s was not refused", target)
	}
	got, _, err := s.Runner.Get(ctx, target)
	if err != nil {
		return err
	}
	if got.Status != ir.Running {
		return fmt.Errorf("the refused calls left session %s %s", target, got.Status)
	}
	return nil
}

// grantedVerbs checks that r lists target, pauses and resumes it, and cancels it.
func grantedVerbs(ctx context.Context, s *Subject, r ir.Runner, target string) error {
	ss, err := r.List(ctx)
	if err != nil {
		return fmt.Errorf("list: %v", err)
	}
	if !containsSession(ss, target) {
		return fmt.Errorf("list does not show session %s", target)
	}
	for _, st := range []ir.SessionStatus{ir.Paused, ir.Running} {
		applied, err := r.Update(ctx, target, ir.Patch{Status: st})
		if err != nil || !applied {
			return fmt.Errorf("update %s to %s: applied %v, %v", target, st, applied, err)
		}
		if got, _, err := s.Runner.Get(ctx, target); err != nil || got.Status != st {
			return fmt.Errorf("after update to %s, the operator's get says %q (%v)", st, got.Status, err)
		}
	}
	if ok, err := r.Cancel(ctx, target); err != nil || !ok {
		return fmt.Errorf("cancel %s: %v, %v", target, ok, err)
	}
	// A cancelled session stays readable, as cancelled.
	got, found, err := s.Runner.Get(ctx, target)
	if err == nil && (!found || got.Status != ir.Cancelled) {
		err = fmt.Errorf("after cancel, the operator's get says %q (found %v), want cancelled", got.Status, found)
	}
	return err
}

func containsSession(ss []ir.Session, id string) bool {
	for _, x := range ss {
		if x.ID == id {
			return true
		}
	}
	return false
}

// checkResult launches the result actor twice: its exit 0 is done with a result its schema
// accepts, failed with one it refuses.
func checkResult(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Result == "" {
		return NotProbed, s.NotProbed, ""
	}
	for _, c := range []struct {
		ref  string
		want ir.SessionStatus
	}{{"valid", ir.Done}, {"invalid", ir.Failed}} {
		params := maps.Clone(Params)
		params["PROBE_REF"] = c.ref
		sess, err := s.Runner.Launch(ctx, s.Result, params)
		if err != nil {
			return Fail, fmt.Sprintf("launch %s: %v", s.Result, err), ""
		}
		var last ir.Session
		err = eventually(ctx, 30*time.Second, func() (bool, error) {
			var err error
			last, _, err = s.Runner.Get(ctx, sess.ID)
			return last.Status.Ended(), err
		})
		if err != nil {
			return Fail, fmt.Sprintf("the session with a %s result never ended: %v", c.ref, err), ""
		}
		if last.Status != c.want {
			return Fail, fmt.Sprintf("exit 0 with a result its schema %s ended %s, want %s", map[bool]string{true: "accepts", false: "refuses"}[c.ref == "valid"], last.Status, c.want), ""
		}
	}
	observed := fmt.Sprintf("%s exited 0 both times: with a result its schema accepts it ended done, with one missing the required field, failed", s.Result)
	if s.RunsBy != "" {
		observed += " (" + s.RunsBy + ")"
	}
	return Supported, "", observed
}

// checkPrelaunch launches the prelaunch actor twice: its prelaunch runs before its process, in
// its workspace (the process reports what it left there); a failing prelaunch fails the session,
// and its process never starts.
func checkPrelaunch(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Prelaunch == "" || s.Seen == nil {
		return NotProbed, s.NotProbed, ""
	}
	params := maps.Clone(Params)
	ran, err := s.Runner.Launch(ctx, s.Prelaunch, params)
	if err != nil {
		return Fail, fmt.Sprintf("launch %s: %v", s.Prelaunch, err), ""
	}
	seen, err := seenParams(ctx, s, ran.ID)
	if err == nil {
		err = expectSeen(seen, map[string]string{"PROBE_PRELAUNCH": ran.ID})
	}
	if err != nil {
		return Fail, fmt.Sprintf("the prelaunch of session %s: %v", ran.ID, err), ""
	}
	params["PROBE_REF"] = "fail"
	failed, err := s.Runner.Launch(ctx, s.Prelaunch, params)
	if err != nil {
		return Fail, fmt.Sprintf("launch %s: %v", s.Prelaunch, err), ""
	}
	var last ir.Session
	err = eventually(ctx, 30*time.Second, func() (bool, error) {
		var err error
		last, _, err = s.Runner.Get(ctx, failed.ID)
		return last.Status.Ended(), err
	})
	if err != nil || last.Status != ir.Failed {
		return Fail, fmt.Sprintf("a session whose prelaunch fails is %q (%v), want failed", last.Status, err), ""
	}
	if seen, err := s.Seen(ctx, failed.ID); err != nil || seen != nil {
		return Fail, fmt.Sprintf("the process of a session whose prelaunch failed started: it reported %v (%v)", seen, err), ""
	}
	return Supported, "", fmt.Sprintf("the process of %s saw what its prelaunch left in the workspace for its session; a failing prelaunch failed its session, whose process never started", s.Prelaunch)
}

// carrierActor holds tasks:author and tasks:converse.
const carrierActor = "carrier"

// checkCarried launches an actor holding the tasks capabilities: its process is told them in
// AUTONOMY_CAPABILITIES, which its tooling reads.
func checkCarried(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Seen == nil {
		return NotProbed, s.NotProbed, ""
	}
	sess, err := launch(ctx, s, carrierActor)
	if err != nil {
		return Fail, err.Error(), ""
	}
	seen, err := seenParams(ctx, s, sess.ID)
	if err != nil {
		return Fail, err.Error(), ""
	}
	caps := strings.Fields(seen["AUTONOMY_CAPABILITIES"])
	for _, c := range []string{"tasks:author", "tasks:converse"} {
		if !slices.Contains(caps, c) {
			return Fail, fmt.Sprintf("the process of %s (capabilities tasks:author, tasks:converse) saw AUTONOMY_CAPABILITIES=%q", carrierActor, seen["AUTONOMY_CAPABILITIES"]), ""
		}
	}
	return Supported, "", fmt.Sprintf("the process of %s saw AUTONOMY_CAPABILITIES=%q", carrierActor, seen["AUTONOMY_CAPABILITIES"])
}
