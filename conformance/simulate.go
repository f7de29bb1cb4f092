package conformance

import (
	"context"
	"fmt"

	"github.com/autonomyhq/autonomy/ir"
)

// checkSimulated realizes the subject's person with a simulator: with a fixture that approves at
// once, the tick after the launch completes the ask; with a never fixture, it stays open.
func checkSimulated(ctx context.Context, s *Subject) (Outcome, string) {
	if s.Simulate == nil {
		return NotProbed, s.NotProbed
	}
	for _, c := range []struct {
		fixture string
		want    ir.SessionStatus
	}{
		{s.Actor + ":\n  - { choose: approve, after: 0s }\n", ir.Done},
		{s.Actor + ":\n  - { never: true }\n", ir.Running},
	} {
		tick, err := s.Simulate(ctx, c.fixture)
		if err != nil {
			return Fail, fmt.Sprintf("registering the fixtures: %v", err)
		}
		sess, err := launch(ctx, s, s.Actor)
		if err != nil {
			return Fail, err.Error()
		}
		if err := tick(ctx); err != nil {
			return Fail, fmt.Sprintf("tick: %v", err)
		}
		got, _, err := s.Runner.Get(ctx, sess.ID)
		if err != nil {
			return Fail, err.Error()
		}
		if got.Status != c.want {
			return Fail, fmt.Sprintf("with the fixture %q the ask is %s after a tick, not %s", c.fixture, got.Status, c.want)
		}
	}
	return Supported, ""
}
