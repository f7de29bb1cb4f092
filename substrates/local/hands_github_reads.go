package local

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// The reads of work items for codeHost github (docs/tools.md, "On GitHub from the local
// runner"). read_item and list_items go the way the writes go: the session's MCP server holds
// no token, so it records the read in the store (an event of kind read:<tool>, not counted
// against any tool's cap, at most maxReads of them per session) and waits; the session's
// supervisor reads GitHub with the runner's token, bounded as gh-actions' reads are
// (ghwrite.ReadItem, ghwrite.ListItems: the body and each comment cut at 16 KiB, the last 50
// comments, at most 100 items listed, saying so in the answer), within GitHub's rate limit
// (ghlimit), and stores the answer under the read's number for the server to return, which
// then replaces it with a mark, so the store keeps no answers.

// itemReads are the reads the supervisor answers from GitHub.
var itemReads = []string{tools.ReadItem, tools.ListItems}

// maxReads bounds the reads of GitHub one session may ask the runner for.
const maxReads = 500

func readEvent(tool string) string { return "read:" + tool }

// readTool is the read tool an event of kind asks for.
func readTool(kind string) (string, bool) {
	for _, t := range itemReads {
		if kind == readEvent(t) {
			return t, true
		}
	}
	return "", false
}

// readViaRunner has the session's supervisor answer a read of the work items from GitHub.
func (h *Hands) readViaRunner(ctx context.Context, tool string, in tools.Input) (any, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	seq, err := h.r.caller.logRead(ctx, tool, string(raw))
	if err != nil {
		return nil, err
	}
	o, err := h.r.awaitEffect(ctx, seq, effectWait)
	if err != nil {
		return nil, err
	}
	// The answer, once read, is not kept: a small mark keeps the read claimed.
	_ = h.r.Store.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error { return tx.SetMeta(effectKey(seq), `{"state":"done"}`) })
	if o.Refused != "" {
		return nil, &tools.Refused{Tool: tool, Reason: o.Refused}
	}
	return json.RawMessage(o.Outcome), nil
}

// logRead records a read for the supervisor, refusing one past maxReads.
func (c *caller) logRead(ctx context.Context, tool, what string) (int64, error) {
	if c == nil {
		return 0, &tools.Refused{Tool: tool, Reason: "only a session reads work items through the runner"}
	}
	var seq int64
	over := false
	err := c.store.Tx(ctx, func(tx *store.Tx) error {
		n := int64(0)
		for _, t := range itemReads {
			k, err := tx.CountEvents(c.session.ID, readEvent(t))
			if err != nil {
				return err
			}
			n += int64(k)
		}
		if over = n >= maxReads; over {
			return nil
		}
		var err error
		seq, err = tx.LogSeq(store.Event{Session: c.session.ID, Actor: c.session.Actor, Kind: readEvent(tool), Message: what})
		return err
	})
	if err == nil && over {
		err = &tools.Refused{Tool: tool, Reason: fmt.Sprintf("this session already read GitHub %d times through the runner, the most one session may", maxReads)}
	}
	return seq, err
}

// decodeRead reads the input of a read the session recorded; reads need no capability.
func decodeRead(e tools.Effect) (tools.Input, error) {
	t, ok := tools.Lookup(e.Tool)
	if !ok {
		return nil, fmt.Errorf("%s is not a tool", e.Tool)
	}
	return tools.Decode(t, e.Input)
}

// answer reads what a checked read asks for on GitHub, as the JSON the model reads.
func (g *githubApplier) answer(ctx context.Context, in tools.Input) (string, bool, error) {
	var v any
	var err error
	switch q := in.(type) {
	case *tools.ItemRef:
		v, err = g.repo.ReadItem(ctx, q.Item)
	case *tools.StateQuery:
		v, err = g.repo.ListItems(ctx, q.State)
	default:
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	b, err := json.Marshal(v)
	return string(b), true, err
}
