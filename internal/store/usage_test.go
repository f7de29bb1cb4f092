package store

import (
	"context"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"testing"
	"time"
)

// Usage is kept per session, replaced when recorded again, and summed by time and actor.
func TestUsageIsKeptAndSummed(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, u := range []Usage{
		{Session: "a1", Actor: "a", At: day.Add(-48 * time.Hour), Usage: modelproxy.Usage{Requests: 1, InputTokens: 100, OutputTokens: 10, CostUSD: 0.5}},
		{Session: "a2", Actor: "a", At: day, Usage: modelproxy.Usage{Requests: 2, InputTokens: 200, OutputTokens: 20, CostUSD: 1}},
		{Session: "a2", Actor: "a", At: day, Usage: modelproxy.Usage{Requests: 3, InputTokens: 300, CachedInputTokens: 50, OutputTokens: 30, CostUSD: 1.5}},
		{Session: "b1", Actor: "b", At: day.Add(time.Hour), Usage: modelproxy.Usage{Requests: 1, InputTokens: 7, OutputTokens: 1, Estimated: true}},
	} {
		if err := st.PutUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := st.GetUsage(ctx, "a2")
	if err != nil || !ok || got.Requests != 3 || got.InputTokens != 300 || got.CachedInputTokens != 50 || got.OutputTokens != 30 || got.CostUSD != 1.5 || !got.At.Equal(day) {
		t.Errorf("a2: %+v %v %v", got, ok, err)
	}
	if _, ok, err := st.GetUsage(ctx, "none"); ok || err != nil {
		t.Errorf("an unknown session has usage: %v %v", ok, err)
	}
	for _, c := range []struct {
		since    time.Time
		actor    string
		requests int64
		input    int64
		est      bool
	}{{time.Time{}, "", 5, 407, true}, {day, "", 4, 307, true}, {day, "a", 3, 300, false}, {time.Time{}, "a", 4, 400, false}, {day.Add(2 * time.Hour), "", 0, 0, false}} {
		sum, err := st.SumUsage(ctx, c.since, c.actor)
		if err != nil || sum.Requests != c.requests || sum.InputTokens != c.input || sum.Estimated != c.est {
			t.Errorf("since %v actor %q: %+v %v", c.since, c.actor, sum, err)
		}
	}
}
