package ghcmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// TestAnswerPausedRefusals: gh resume's answer to a paused run refuses a state it cannot trust
// (no envelope waiting, no pause, a pause the envelope's token does not redeem: exit 2 or 1, and
// nothing written), takes a reject of an input as the run cancelled (false), and refuses an
// answer that is not one to the elicitation's kind.
func TestAnswerPausedRefusals(t *testing.T) {
	put := func(dir, name string, v any) {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	envelope := stepsrun.Envelope{Status: stepsrun.StatusNeedsInput, RequiresInput: &stepsrun.InputRequest{Kind: "input", ResumeToken: "tok"}}
	ask := func(resolved, kind string) *effect.Ask {
		return &effect.Ask{Resolved: resolved, Elicit: &effect.Elicitation{Kind: kind}, Answer: "yes"}
	}
	code := func(err error) int {
		var e *exitcode.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return -1
	}
	ctx := context.Background()

	empty := t.TempDir()
	if _, err := answerPaused(ctx, empty, t.TempDir(), "ask", ask("answer", "input")); code(err) != exitcode.Usage || !strings.Contains(err.Error(), "no envelope waiting for input") {
		t.Errorf("no envelope: %v", err)
	}
	noPause := t.TempDir()
	put(noPause, "envelope.json", envelope)
	if _, err := answerPaused(ctx, noPause, t.TempDir(), "ask", ask("answer", "input")); code(err) != exitcode.Usage || !strings.Contains(err.Error(), "no pause.json") {
		t.Errorf("no pause: %v", err)
	}
	other := t.TempDir()
	put(other, "envelope.json", envelope)
	put(other, "pause.json", stepsrun.Pause{TokenHash: playproto.HashToken("another"), State: json.RawMessage(`{}`)})
	out := filepath.Join(t.TempDir(), "out")
	if _, err := answerPaused(ctx, other, out, "ask", ask("answer", "input")); code(err) != exitcode.Problems || !strings.Contains(err.Error(), "not the one its envelope's token redeems") {
		t.Errorf("another run's pause: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused answer wrote %s: %v", out, err)
	}
	ours := t.TempDir()
	put(ours, "envelope.json", envelope)
	put(ours, "pause.json", stepsrun.Pause{TokenHash: playproto.HashToken("tok"), State: json.RawMessage(`{}`)})
	if answered, err := answerPaused(ctx, ours, out, "ask", ask("reject", "input")); answered || err != nil {
		t.Errorf("a reject of an input: %v, %v; want the run cancelled", answered, err)
	}
	if _, err := answerPaused(ctx, ours, out, "ask", ask("approve", "input")); code(err) != exitcode.Problems || !strings.Contains(err.Error(), "does not answer a input") {
		t.Errorf("an approve of an input: %v", err)
	}
}
