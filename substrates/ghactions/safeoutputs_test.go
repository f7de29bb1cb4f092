package ghactions

import (
	"strings"
	"testing"
)

// policy.box.gh-actions.tools is read with positions: a tool that changes nothing, a count that
// is not a whole number of at least 0, a staged that is not a boolean and an unknown key are
// errors naming the file, line and column; a valid one compiles without a warning about it.
func TestToolsBox(t *testing.T) {
	good := agent("tasks:converse", dispatchRef) + "policy:\n  box:\n    gh-actions:\n      tools: { max: { comment: 0, launch: 2 }, staged: true }\n"
	out := compileOK(t, good)
	if strings.Contains(out.Warnings.String(), "tools") {
		t.Errorf("a valid tools box is warned about:\n%s", out.Warnings)
	}
	cases := map[string]string{
		"      tools: { max: { read_item: 1 } }\n":  `12:23: policy.box.gh-actions.tools.max: "read_item" is not a tool that changes anything`,
		"      tools: { max: { coment: 1 } }\n":     `did you mean "comment"`,
		"      tools: { max: { comment: -1 } }\n":   `12:32: policy.box.gh-actions.tools.max.comment must be a whole number of at least 0`,
		"      tools: { max: { comment: many } }\n": `tools.max.comment must be a whole number`,
		"      tools: { staged: yes-please }\n":     `12:24: policy.box.gh-actions.tools.staged must be true or false`,
		"      tools: { stage: true }\n":            `12:16: policy.box.gh-actions.tools: unknown key "stage"`,
		"      tools: [comment]\n":                  `tools must be a mapping`,
		"      tools: { max: [comment] }\n":         `tools.max must be a mapping`,
	}
	for box, want := range cases {
		_, err := compileErr(t, agent("tasks:converse", dispatchRef)+"policy:\n  box:\n    gh-actions:\n"+box)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ir.yml:") {
			t.Errorf("%s: got %v, want %q", strings.TrimSpace(box), err, want)
		}
	}
}
