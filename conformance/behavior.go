package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The behavioral checks observe the matrix's features on a runner: each launches through the
// subject's seams (a fake clock, a launch with a firing context, a launch from inside a session)
// and reads what reached the launched process. The actors they launch are the probe fleet's
// (conformance/probe).
const (
	// cronActor fires at 06:17 UTC every day.
	cronActor = "ticker"
	// launcherActor holds agent:launch@probe and nothing else.
	launcherActor = "launcher"
	// outOfScope is an actor launcherActor's scope does not cover.
	outOfScope = "overtime"
)

// cronDay is the day the fake clock runs on: a Monday.
var cronDay = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// seenParams waits for the process of session id to report its params.
func seenParams(ctx context.Context, s *Subject, id string) (map[string]string, error) {
	var seen map[string]string
	err := eventually(ctx, 30*time.Second, func() (bool, error) {
		var err error
		seen, err = s.Seen(ctx, id)
		return seen != nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("the process of session %s never reported its params: %v", id, err)
	}
	return seen, nil
}

// expectSeen compares what the process saw with want, param by param.
func expectSeen(seen map[string]string, want map[string]string) error {
	for _, k := range sortedKeys(want) {
		if seen[k] != want[k] {
			return fmt.Errorf("the process saw %s=%q, want %q", k, seen[k], want[k])
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// checkCron ticks a fake clock across the cron actor's minute: nothing fires before it, one
// session fires at it, none again within it, and the process sees trigger.kind cron.
func checkCron(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.TickAt == nil && s.Schedule != nil {
		return checkSchedule(ctx, s)
	}
	if s.TickAt == nil {
		return NotProbed, s.NotProbed, ""
	}
	var fired ir.Session
	for _, tk := range []struct {
		h, m, sec int
		want      int
	}{{6, 10, 0, 0}, {6, 16, 59, 0}, {6, 17, 0, 1}, {6, 17, 40, 0}} {
		at := cronDay.Add(time.Duration(tk.h)*time.Hour + time.Duration(tk.m)*time.Minute + time.Duration(tk.sec)*time.Second)
		got, err := s.TickAt(ctx, at)
		if err != nil {
			return Fail, fmt.Sprintf("tick at %s: %v", at.Format("15:04:05"), err), ""
		}
		var ours []ir.Session
		for _, x := range got {
			if x.Agent == cronActor {
				ours = append(ours, x)
			}
		}
		if len(ours) != tk.want {
			return Fail, fmt.Sprintf("a tick at %s UTC launched %d sessions of %s (cron 17 6 * * *), want %d", at.Format("15:04:05"), len(ours), cronActor, tk.want), ""
		}
		if tk.want > 0 {
			fired = ours[0]
		}
	}
	observed := "ticks of a fake clock at 06:10:00 and 06:16:59 UTC fired nothing; at 06:17:00 one session of " + cronActor + " was launched"
	if s.TickFrom != "" {
		observed = "ticks of a fake clock (" + s.TickFrom + ") at 06:10:00 and 06:16:59 UTC fired nothing; at 06:17:00 one session of " + cronActor + " was launched"
	}
	if s.Seen == nil {
		return Pass, "", observed + "; at 06:17:40 nothing"
	}
	seen, err := seenParams(ctx, s, fired.ID)
	if err == nil {
		err = expectSeen(seen, map[string]string{"PROBE_KIND": "cron"})
	}
	if err != nil {
		return Fail, err.Error(), ""
	}
	return Pass, "", observed + ", " + cmp.Or(s.SeenFrom, "whose process saw") + " PROBE_KIND=cron (trigger.kind); at 06:17:40 nothing"
}

// checkSources dispatches the probe as the operator with a subject: every param source reaches
// the process, and the operator's role is not a session's NONE.
func checkSources(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Fire == nil || s.Seen == nil {
		return NotProbed, s.NotProbed, ""
	}
	f := substrates.Firing{Ref: Params["PROBE_REF"], From: "octocat", Text: Params["PROBE_TEXT"]}
	sess, err := s.Fire(ctx, s.Actor, f)
	if err != nil {
		return verdict3(Expanded, fmt.Errorf("dispatching %s with a subject: %w", s.Actor, err))
	}
	// A runner that knows who dispatched takes subject.actor from that, not from the firing.
	actor, kind := cmp.Or(s.Dispatcher, f.From), cmp.Or(s.DispatchKind, "dispatch")
	seen, err := seenParams(ctx, s, sess.ID)
	if err == nil {
		err = expectSeen(seen, map[string]string{"PROBE_REF": f.Ref, "PROBE_TEXT": f.Text, "PROBE_ACTOR": actor, "PROBE_KIND": kind})
	}
	if err == nil && (seen["PROBE_ROLE"] == "" || seen["PROBE_ROLE"] == "NONE") {
		err = fmt.Errorf("the operator's dispatch reached the process with PROBE_ROLE=%q (subject.actorRole), a session's role", seen["PROBE_ROLE"])
	}
	if err != nil {
		return Fail, err.Error(), ""
	}
	observed := fmt.Sprintf("%s PROBE_REF=%s (subject.ref), PROBE_TEXT verbatim (subject.text), PROBE_ACTOR=%s (subject.actor), PROBE_ROLE=%s (subject.actorRole), PROBE_KIND=%s (trigger.kind)",
		cmp.Or(s.SeenFrom, "the process saw"), seen["PROBE_REF"], seen["PROBE_ACTOR"], seen["PROBE_ROLE"], kind)
	if s.Dispatcher != "" {
		observed += fmt.Sprintf("; subject.actor is the dispatcher %s, not the %s the dispatch named", s.Dispatcher, f.From)
	}
	return Supported, "", observed
}

// refusal tries a launch that must be refused, and checks it started nothing (the sessions in
// flight are the same before and after); it returns why the launch was refused, as the runner
// said.
func refusal(ctx context.Context, s *Subject, actor string, f substrates.Firing, what string) (string, error) {
	before, err := listed(ctx, s)
	if err != nil {
		return "", err
	}
	sess, ferr := s.Fire(ctx, actor, f)
	if ferr == nil {
		return "", fmt.Errorf("%s was not refused: it launched session %s", what, sess.ID)
	}
	if errors.Is(ferr, substrates.ErrNotTried) {
		return "", fmt.Errorf("%s was not tried, so not seen refused: %v", what, ferr)
	}
	after, err := listed(ctx, s)
	if err != nil {
		return "", err
	}
	for id, x := range after {
		if _, was := before[id]; !was {
			return "", fmt.Errorf("%s was refused, but session %s of %s started", what, id, x.Agent)
		}
	}
	return ferr.Error(), nil
}

// checkSessionSources launches the probe from inside a session (of s.ScopeLauncher, or the
// launcher): it cannot set who fired it (subject.actor, subject.actorRole), and what it launches
// carries its actor and the role NONE.
func checkSessionSources(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Fire == nil || s.Seen == nil {
		return NotProbed, s.NotProbed, ""
	}
	if s.SessionNotProbed != "" {
		return NotProbed, s.SessionNotProbed, ""
	}
	launcher := cmp.Or(s.ScopeLauncher, launcherActor)
	caller, err := s.Fire(ctx, launcher, substrates.Firing{})
	if err != nil {
		return Fail, fmt.Sprintf("launching %s: %v", launcher, err), ""
	}
	forged := []struct {
		what string
		f    substrates.Firing
	}{
		{"a launch from a session setting PROBE_ROLE (subject.actorRole) to OWNER", substrates.Firing{Session: caller.ID, Params: ir.LaunchParams{"PROBE_ROLE": "OWNER"}}},
		{"a launch from a session setting PROBE_ACTOR (subject.actor)", substrates.Firing{Session: caller.ID, Params: ir.LaunchParams{"PROBE_ACTOR": "octocat"}}},
		{"a launch from a session naming another actor as its subject.actor", substrates.Firing{Session: caller.ID, From: "octocat"}},
	}
	var reasons []string
	for _, x := range forged {
		why, err := refusal(ctx, s, s.Actor, x.f, x.what)
		if err != nil {
			return Fail, err.Error(), ""
		}
		reasons = append(reasons, strconv.Quote(why))
	}
	sess, err := s.Fire(ctx, s.Actor, substrates.Firing{Session: caller.ID, Ref: Params["PROBE_REF"]})
	if err != nil {
		return Fail, fmt.Sprintf("session %s (%s, agent:launch@%s) launching %s: %v", caller.ID, launcher, s.Actor, s.Actor, err), ""
	}
	seen, err := seenParams(ctx, s, sess.ID)
	if err == nil {
		err = expectSeen(seen, map[string]string{"PROBE_ACTOR": launcher, "PROBE_ROLE": "NONE", "PROBE_REF": Params["PROBE_REF"]})
	}
	if err != nil {
		return Fail, err.Error(), ""
	}
	observed := fmt.Sprintf("from a session of %s, setting PROBE_ROLE or PROBE_ACTOR, or naming another subject.actor, was refused and started nothing; its launch reached the process with PROBE_ACTOR=%s (subject.actor) and PROBE_ROLE=NONE (subject.actorRole)", launcher, launcher)
	if s.ScopeLauncher != "" {
		observed += fmt.Sprintf(" (refused: %s)", strings.Join(reasons, "; "))
	}
	if s.SeenFrom != "" {
		observed += fmt.Sprintf("; %s PROBE_ACTOR=%s, PROBE_ROLE=%s", s.SeenFrom, seen["PROBE_ACTOR"], seen["PROBE_ROLE"])
	}
	return Supported, "", observed
}

// checkScope launches from inside sessions (of s.ScopeLauncher, or the launcher): agent:launch@probe launches probe and is refused
// another actor; a session without agent:launch is refused probe. A refused launch starts nothing.
func checkScope(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Fire == nil {
		return NotProbed, s.NotProbed, ""
	}
	if s.SessionNotProbed != "" && s.ScopeLauncher == "" {
		return NotProbed, s.SessionNotProbed, ""
	}
	launcher := cmp.Or(s.ScopeLauncher, launcherActor)
	caller, err := s.Fire(ctx, launcher, substrates.Firing{})
	if err != nil {
		return Fail, fmt.Sprintf("launching %s: %v", launcher, err), ""
	}
	outside, err := refusal(ctx, s, outOfScope, substrates.Firing{Session: caller.ID},
		fmt.Sprintf("%s (agent:launch@%s) launching %s", launcher, s.Actor, outOfScope))
	if err != nil {
		return Fail, err.Error(), ""
	}
	inScope, err := s.Fire(ctx, s.Actor, substrates.Firing{Session: caller.ID})
	if err != nil {
		return Fail, fmt.Sprintf("%s (agent:launch@%s) launching %s, within its scope: %v", launcher, s.Actor, s.Actor, err), ""
	}
	// The caller ends, so the next refusal cannot be for want of capacity.
	if _, err := s.Runner.Cancel(ctx, caller.ID); err != nil {
		return Fail, fmt.Sprintf("cancel %s: %v", caller.ID, err), ""
	}
	none, err := refusal(ctx, s, s.Actor, substrates.Firing{Session: inScope.ID},
		fmt.Sprintf("%s (no agent:launch) launching %s", s.Actor, s.Actor))
	if err != nil {
		return Fail, err.Error(), ""
	}
	observed := fmt.Sprintf("a session of %s (agent:launch@%s) launched %s and was refused %s; a session of %s (no agent:launch) was refused %s; no refused launch started a session",
		launcher, s.Actor, s.Actor, outOfScope, s.Actor, s.Actor)
	if s.ScopeLauncher != "" {
		observed += fmt.Sprintf(" (refused: %q; %q)", outside, none)
	}
	return Supported, "", observed
}

// verdict3 is verdict with nothing observed.
func verdict3(tier Tier, err error) (Outcome, string, string) {
	o, r := verdict(tier, err)
	return o, r, ""
}
