package local

import (
	"slices"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
)

// A label a session's write names in one case comes back in GitHub's events under the
// repository's spelling: the event still names the runner's write (GitHub matches label names
// whatever their case), so it fires nothing.
func TestLabelWriteNamesItsEventWhateverTheCase(t *testing.T) {
	for _, c := range []struct {
		w  ghwrite.Write
		ev ghEvent
	}{
		{ghwrite.Write{Kind: "labeled", Item: 7, Label: "Ready"}, ghEvent{Name: "issues", Action: "labeled", Ref: "7", Label: "ready"}},
		{ghwrite.Write{Kind: "unlabeled", Item: 7, Label: "in-REVIEW"}, ghEvent{Name: "issues", Action: "unlabeled", Ref: "7", Label: "In-Review"}},
		{ghwrite.Write{Kind: "issue", Title: "t", Body: "b", Labels: []string{"Bug"}}, ghEvent{Name: "issues", Action: "labeled", Ref: "9", Title: "t", Body: "b", Label: "bug"}},
	} {
		_, pending := eventKeys(c.ev)
		if !slices.ContainsFunc(writeKeys(c.w), func(k string) bool { return slices.Contains(pending, k) }) {
			t.Errorf("the write %+v does not name the event %+v", c.w, c.ev)
		}
	}
}
