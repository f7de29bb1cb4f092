package local

import (
	"reflect"
	"strings"
	"testing"
)

// policy.box.local.tools.max sets a session's caps per tool; a name that is no effect tool, a
// count out of range and gh-actions' staged are refused at their line and column.
func TestBoxToolsMax(t *testing.T) {
	t.Parallel()
	b, diags := readBox(writeBoxProfile(t, `{ tools: { max: { comment: 2, launch: 0 } } }`))
	if diags.HasErrors() || !reflect.DeepEqual(b.toolsMax, map[string]int{"comment": 2, "launch": 0}) {
		t.Fatalf("toolsMax %v\n%s", b.toolsMax, diags)
	}
	for box, want := range map[string]string{
		`{ tools: { max: { coment: 2 } } }`:    `9:30: policy.box.local.tools.max: "coment" is not a tool that changes anything`,
		`{ tools: { max: { read_item: 1 } } }`: `"read_item" is not a tool that changes anything`,
		`{ tools: { max: { launch: -1 } } }`:   "9:38: policy.box.local.tools.max.launch is -1; it must be between 0 and 1000",
		`{ tools: { staged: true } }`:          "9:23: policy.box.local.tools.staged does not apply locally",
		`{ tools: [max] }`:                     "policy.box.local.tools must be a mapping",
	} {
		_, diags := readBox(writeBoxProfile(t, box))
		if !diags.HasErrors() || !strings.Contains(diags.String(), want) {
			t.Errorf("%s: %s, want %q", box, diags, want)
		}
	}
}
