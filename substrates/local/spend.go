package local

import (
	"context"
	"fmt"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// verbTools are the tools whose caps a runner verb spends: a session's autonomy runner launch
// counts against the same cap as its launch tool, so a shell cannot go past what the tools allow.
var verbTools = map[string]string{"launch": tools.Launch, "update": tools.UpdateSession, "cancel": tools.CancelSession}

// toolEvent is the kind of the event that records one realized call of tool.
func toolEvent(tool string) string { return "tool:" + tool }

// spend counts one call of tool against the session's cap (policy.box.local.tools.max, else
// tools.DefaultMax), in the store: the
// count survives a restarted MCP server and covers the runner verbs its shell runs. A call past
// the cap is refused and recorded as denied; what is spent is recorded with what, as an event.
func (c *caller) spend(ctx context.Context, tool, what string) error {
	_, err := c.spendSeq(ctx, tool, what)
	return err
}

// spendSeq is spend, and returns the number of the event that records the call (0 for the
// operator, who has no cap).
func (c *caller) spendSeq(ctx context.Context, tool, what string) (int64, error) {
	if c == nil {
		return 0, nil
	}
	max, ok := c.max[tool]
	if !ok {
		max = tools.DefaultMax[tool]
	}
	var over bool
	var seq int64
	err := c.store.Tx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountEvents(c.session.ID, toolEvent(tool))
		if err != nil {
			return err
		}
		if over = n >= max; over {
			return nil
		}
		seq, err = tx.LogSeq(store.Event{Session: c.session.ID, Actor: c.session.Actor, Kind: toolEvent(tool), Message: what})
		return err
	})
	if err != nil {
		return 0, err
	}
	if over {
		return 0, c.deny(ctx, fmt.Sprintf("refused: %s: %s already used its %d %s call(s) (the cap in policy.box.local.tools.max, docs/tools.md)", tool, c.describe(), max, tool))
	}
	return seq, nil
}
