package ghactions

import (
	"errors"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestPausedItemCondition: an agent job's condition skips an event whose issue or pull request
// carries the pause label (ignoring case, as GitHub does), the default or the one
// policy.box.gh-actions.paused_label names, quotes included; a dispatched run of an actor with a
// work item checks its item in a step after the checkout, which later reporting steps follow.
func TestPausedItemCondition(t *testing.T) {
	y := head + `  a:
    behavior: skills/a
    capabilities: [tasks:converse]
    triggers:
      - event: issue_comment
        config: { plain_comments: true }
        params: { ISSUE: subject.ref }
      - event: pull_request_target
        params: { PR: subject.ref }
      - dispatch: true
        params: { ISSUE: subject.ref }
`
	for _, c := range []struct{ box, label string }{{"", "AUTONOMY:PAUSED"}, {"policy:\n  box:\n    gh-actions: { paused_label: \"don't\" }\n", "Don't"}} {
		wf := file(t, compileOK(t, y+c.box), WorkflowPath("a"))
		cond, _ := job(t, wf, "agent")["if"].(string)
		for _, ev := range []struct {
			name, object string
			trusted      map[string]any
		}{
			{"issue_comment", "issue", map[string]any{"github.event.comment.author_association": "OWNER", "github.event.comment.body": "hi"}},
			{"pull_request_target", "pull_request", map[string]any{"github.event.pull_request.author_association": "OWNER"}},
		} {
			for _, labels := range [][]any{{"bug"}, {"bug", c.label}} {
				ctx := map[string]any{"github.event_name": ev.name, "github.event." + ev.object + ".labels.*.name": labels}
				for k, v := range ev.trusted {
					ctx[k] = v
				}
				if got, want := evalExpr(t, "${{ "+strings.TrimSuffix(strings.TrimPrefix(cond, "${{ "), " }}")+" }}", ctx), len(labels) == 1; (got == "true") != want {
					t.Errorf("%q: %s with labels %v: the agent job runs %s, want %v\n%s", c.box, ev.name, labels, got, want, cond)
				}
			}
		}
		steps, _ := job(t, wf, "agent")["steps"].([]any)
		at := -1
		for i, s := range steps {
			st := s.(map[string]any)
			if run, _ := st["run"].(string); strings.TrimSpace(run) == `"$AUTONOMY_BIN" gh paused` {
				at = i
				env := st["env"].(map[string]any)
				if env["AUTONOMY_SUBJECT"] != "${{ inputs.ISSUE || github.event.issue.number || github.event.pull_request.number }}" || st["id"] != pausedStepID {
					t.Errorf("the pause check: %v", st)
				}
			}
			if cond, _ := st["if"].(string); at >= 0 && i > at && cond == "always()" && st["name"] != disarmStepName {
				t.Errorf("step %v runs always() after the pause check", st["name"])
			}
		}
		if at < 1 || steps[at-1].(map[string]any)["name"] != "Check out the repository" {
			t.Errorf("the pause check is not right after the checkout: at %d", at)
		}
	}
}

// TestPausedLabelRefused: a paused_label GitHub would not accept is an error at its position.
func TestPausedLabelRefused(t *testing.T) {
	for _, v := range []string{`""`, `"` + strings.Repeat("x", 51) + `"`, `" padded"`, `[a]`} {
		_, err := compileErr(t, agent("", dispatchRef)+"policy:\n  box:\n    gh-actions: { paused_label: "+v+" }\n")
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !strings.Contains(diags.Error(), "paused_label") || !strings.Contains(diags.Error(), "ir.yml:11:33: ") {
			t.Errorf("paused_label: %s: %v", v, err)
		}
	}
}
