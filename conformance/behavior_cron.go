package conformance

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/autonomyhq/autonomy/ir/cron"
)

// cronExpr is the cron actor's trigger in the probe fleet.
const cronExpr = "17 6 * * *"

// checkSchedule is the cron check on a runner whose scheduler is not observable: the scheduler
// must be given exactly the cron actor's schedule (compared parsed, firing by firing), and a
// scheduled firing must start the actor's process with its trigger.kind. When the scheduler fires
// is the runner's own, so the check stays not probed, saying what it observed.
func checkSchedule(ctx context.Context, s *Subject) (Outcome, string, string) {
	crons, fired, err := s.Schedule(ctx, cronActor)
	if err != nil {
		return Fail, fmt.Sprintf("reading the schedule of %s: %v", cronActor, err), ""
	}
	if len(crons) != 1 {
		return Fail, fmt.Sprintf("the scheduler is given %d cron expressions for %s %q, want one: %s", len(crons), cronActor, crons, cronExpr), ""
	}
	if err := sameSchedule(crons[0], cronExpr); err != nil {
		return Fail, err.Error(), ""
	}
	if fired == nil {
		return Fail, fmt.Sprintf("a scheduled firing of %s starts no process", cronActor), ""
	}
	kind := cmp.Or(s.ScheduleKind, "cron")
	if err := expectSeen(fired, map[string]string{"PROBE_KIND": kind}); err != nil {
		return Fail, "a scheduled firing: " + err.Error(), ""
	}
	return NotProbed, "when the scheduler fires is the runner's own and not observable: " + s.NotProbed,
		fmt.Sprintf("the scheduler is given %q, which fires when %s does; a scheduled firing starts %s's process with PROBE_KIND=%s (trigger.kind); the firing at 06:17 UTC itself is not observed",
			crons[0], cronExpr, cronActor, kind)
}

// sameSchedule checks that got fires exactly when want does, over a year of firings from cronDay.
func sameSchedule(got, want string) error {
	g, err := cron.Parse(got)
	if err != nil {
		return fmt.Errorf("the scheduler's cron %q does not parse: %v", got, err)
	}
	w, err := cron.Parse(want)
	if err != nil {
		return err
	}
	at := cronDay
	for range 400 {
		gn, wn := g.Next(at), w.Next(at)
		if !gn.Equal(wn) {
			return fmt.Errorf("the scheduler's cron %q fires at %s, the profile's %q at %s", got, gn.Format(time.RFC3339), want, wn.Format(time.RFC3339))
		}
		at = wn
	}
	return nil
}
