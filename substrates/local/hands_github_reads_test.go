//go:build unix

package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/store"
)

// TestGitHubReadsGoThroughTheRunner: on codeHost github, read_item and list_items of a session
// holding no capability are answered from GitHub by its supervisor with the runner's token:
// the item's title, body, labels and last comments, cut to the bounds and saying so; the items
// of a lifecycle state by its taskStates label. GitHub's refusal and a rate limit come back as
// tool errors, and the token reaches no session.
func TestGitHubReadsGoThroughTheRunner(t *testing.T) {
	gh, issue := newIssueFake(t)
	if err := gh.Label(issue, "octo", "status: ready"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < ghwrite.MaxReadComments+4; i++ {
		body := "note " + string(rune('a'+i%26))
		if i == ghwrite.MaxReadComments+3 {
			body = "last " + strings.Repeat("é", ghwrite.MaxReadText)
		}
		if _, err := gh.AddComment(issue, "ada", body); err != nil {
			t.Fatal(err)
		}
	}
	other := gh.AddIssue("not ready", "")
	dir := installFleet(t, ghHandsFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	mute := launch(t, r, LaunchRequest{Actor: "mute"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, mute.ID)
	}()
	cs := sessionTools(t, dir, mute.ID)

	out, isErr := callTool(t, cs, "read_item", `{"item":"#1"}`)
	var it ghwrite.Item
	if isErr || json.Unmarshal([]byte(out), &it) != nil {
		t.Fatalf("read_item #1: %s", out)
	}
	last := it.Comments[len(it.Comments)-1]
	if it.Title != "a bug" || it.State != "open" || len(it.Labels) != 1 || it.Labels[0] != "status: ready" ||
		len(it.Comments) != ghwrite.MaxReadComments || !it.Truncated || !strings.Contains(it.Cut, "the last 50 comments") ||
		!strings.HasPrefix(last.Body, "last ") || len(last.Body) > ghwrite.MaxReadText || last.Author != "ada" {
		t.Errorf("read_item #1 = %+v (%d comments)", it, len(it.Comments))
	}
	out, isErr = callTool(t, cs, "list_items", `{"state":"ready"}`)
	var items []ghwrite.Item
	if isErr || json.Unmarshal([]byte(out), &items) != nil || len(items) != 1 || items[0].Item != "1" {
		t.Errorf("list_items ready = %s, want #1 only (labelled %q by taskStates), not #%d", out, "status: ready", other)
	}
	if out, isErr := callTool(t, cs, "read_item", `{"item":"99"}`); !isErr || !strings.Contains(out, "GitHub refused it") || !strings.Contains(out, "404") {
		t.Errorf("read_item of a missing issue: %q, want GitHub's refusal", out)
	}
	gh.RateLimitNext(1, ghfake.Primary, 10*time.Minute)
	if out, isErr := callTool(t, cs, "read_item", `{"item":"1"}`); !isErr || !strings.Contains(out, "rate limit") {
		t.Errorf("read_item under a rate limit: %q", out)
	}
	assertNoSecret(t, dir, ghSecret, false)
	events, err := r.Store.Events(t.Context(), mute.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if _, read := readTool(e.Kind); !read {
			continue
		}
		var v string
		_ = r.Store.Tx(t.Context(), func(tx *store.Tx) error { v, _, err = tx.Meta(effectKey(e.Seq)); return err })
		if len(v) > 64 {
			t.Errorf("the store keeps the answer of read %d (%d bytes)", e.Seq, len(v))
		}
	}
}
