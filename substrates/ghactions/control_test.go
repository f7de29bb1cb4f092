package ghactions

import (
	"strings"
	"testing"
)

// TestPlainComments: plain_comments: true is ours, not GitHub's: it is taken off the event's
// config, and the actor fires on any trusted comment but a command; a bad value or another event
// is an error (TestLostTriggerIsError).
func TestPlainComments(t *testing.T) {
	wf := file(t, compileOK(t, agent("", "      - { event: issue_comment, config: { types: [created], plain_comments: true } }\n")), WorkflowPath("a"))
	if strings.Contains(wf, PlainCommentsKey) || !strings.Contains(wf, "  issue_comment:\n    types: [created]\n") {
		t.Errorf("plain_comments reached GitHub's config:\n%s", wf)
	}
	if !strings.Contains(wf, "author_association) && !"+commandCond("")+")") {
		t.Errorf("not gated on a plain comment:\n%s", wf)
	}
	only := file(t, compileOK(t, agent("", "      - { event: issue_comment, config: { plain_comments: true } }\n")), WorkflowPath("a"))
	if !strings.Contains(only, "  issue_comment: null\n") {
		t.Errorf("a config of plain_comments alone must fire on every comment type:\n%s", only)
	}
}

// TestControlWorkflow: every profile gets the control workflow, whose jobs never hold contents:
// write, and an actor named like a control command is warned about.
func TestControlWorkflow(t *testing.T) {
	out := compileOK(t, strings.Replace(agent("", "      - { event: issue_comment }\n"), "  a:\n", "  status:\n", 1))
	wf := file(t, out, ControlWorkflowPath)
	if strings.Contains(wf, "contents: write") || !strings.Contains(wf, "AUTONOMY_ACTORS: status\n") || !strings.Contains(wf, "AUTONOMY_COMMANDED: \"\"\n") {
		t.Errorf("control workflow:\n%s", wf)
	}
	if all := out.Warnings.String(); !strings.Contains(all, `actor "status": /agent status is a control command`) {
		t.Errorf("warnings:\n%s", all)
	}
}
