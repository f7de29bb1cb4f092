//go:build unix

package main

import (
	"context"
	"encoding/json"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// runner get shows a session's tokens and cost, runner logs --transcript prints its transcript,
// and runner usage sums the usage by time and actor, as text and as JSON.
func TestRunnerUsageAndTranscript(t *testing.T) {
	dir := runnerFleet(t, seamYAML, map[string]string{
		"scripts/pm.sh": "#!/bin/sh\n" + scriptDone, "scripts/work.sh": "#!/bin/sh\n" + scriptDone, "humans/approver.md": "# Decide\n",
	})
	var ids []string
	for _, actor := range []string{"pm", "worker"} {
		out, errOut, code := cli(t, nil, "runner", "--dir", dir, "launch", actor)
		if code != 0 {
			t.Fatalf("launch %s: %d %s", actor, code, errOut)
		}
		ids = append(ids, strings.TrimSpace(out))
	}
	st, err := store.Open(local.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitAllEnded(t, st, 2)
	ctx := context.Background()
	old := time.Now().Add(-72 * time.Hour)
	for _, u := range []store.Usage{
		{Session: ids[0], Actor: "pm", Usage: modelproxy.Usage{Requests: 3, InputTokens: 300, CachedInputTokens: 20, OutputTokens: 30, CostUSD: 0.25}},
		{Session: ids[1], Actor: "worker", At: old, Usage: modelproxy.Usage{Requests: 1, InputTokens: 100, OutputTokens: 10, CostUSD: 0.5}},
	} {
		if err := st.PutUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	transcript := `{"seq":1,"api":"openai","path":"/openai/v1/responses","usage":{"requests":1}}` + "\n"
	if err := os.MkdirAll(filepath.Join(dir, local.TranscriptDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, local.TranscriptDir, ids[0]+".jsonl"), []byte(transcript), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := cli(t, nil, "runner", "--dir", dir, "get", ids[0])
	if code != 0 || !strings.Contains(out, "requests:  3\n") || !strings.Contains(out, "tokens:    300 in (20 cached), 30 out\n") || !strings.Contains(out, "cost:      $0.2500\n") {
		t.Errorf("get: %d %s\n%s", code, errOut, out)
	}
	out, _, _ = cli(t, nil, "runner", "--dir", dir, "get", ids[0], "--format", "json")
	var got struct{ Usage *store.Usage }
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Usage == nil || got.Usage.Requests != 3 || got.Usage.CostUSD != 0.25 {
		t.Errorf("get --format json: %v %+v\n%s", err, got.Usage, out)
	}
	if out, _, _ = cli(t, nil, "runner", "--dir", dir, "logs", ids[0], "--transcript"); out != transcript {
		t.Errorf("logs --transcript printed %q", out)
	}
	if _, errOut, code = cli(t, nil, "runner", "--dir", dir, "logs", ids[1], "--transcript"); code != 1 || !strings.Contains(errOut, "has no transcript") {
		t.Errorf("logs --transcript without one: %d %s", code, errOut)
	}
	for _, c := range []struct {
		args     []string
		requests int64
		cost     float64
	}{{nil, 4, 0.75}, {[]string{"--since", "24h"}, 3, 0.25}, {[]string{"--actor", "worker"}, 1, 0.5}, {[]string{"--since", "7d", "--actor", "worker"}, 1, 0.5}} {
		out, errOut, code := cli(t, nil, append([]string{"runner", "--dir", dir, "usage", "--format", "json"}, c.args...)...)
		var sum store.Usage
		if err := json.Unmarshal([]byte(out), &sum); code != 0 || err != nil || sum.Requests != c.requests || sum.CostUSD != c.cost {
			t.Errorf("usage %v: %d %s %+v %v", c.args, code, errOut, sum, err)
		}
	}
	if out, _, _ := cli(t, nil, "runner", "--dir", dir, "usage"); !strings.Contains(out, "requests:  4\n") || !strings.Contains(out, "cost:      $0.7500\n") {
		t.Errorf("usage text:\n%s", out)
	}
	if _, errOut, code := cli(t, nil, "runner", "--dir", dir, "usage", "--since", "yesterday"); code != 2 || !strings.Contains(errOut, `--since "yesterday" is not a duration (24h, 7d)`) {
		t.Errorf("a bad --since: %d %s", code, errOut)
	}
}
