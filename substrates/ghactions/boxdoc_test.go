package ghactions

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/keydoc"
	"github.com/autonomyhq/autonomy/ir"
)

// TestBoxKeysAreDocumented: the keys docs/gh-actions.md's policy.box.gh-actions table lists are
// the keys the box reader reads (the switch cases of key, jobKey and referenceKey), which are
// boxKeys and referenceKeys (the near-miss list); and each of them is read: a value of the wrong
// shape is refused, not carried as a key read by nothing.
func TestBoxKeysAreDocumented(t *testing.T) {
	md, err := os.ReadFile("../../docs/gh-actions.md")
	if err != nil {
		t.Fatal(err)
	}
	documented, err := keydoc.TableKeys(md, "## `policy.box.gh-actions`")
	if err != nil {
		t.Fatal(err)
	}
	read, err := keydoc.SwitchKeys(".", "key", "jobKey", "referenceKey")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(documented)
	listed := slices.Sorted(slices.Values(append(append([]string(nil), boxKeys...), referenceKeys...)))
	if !slices.Equal(documented, read) || !slices.Equal(listed, read) {
		t.Errorf("policy.box.gh-actions keys\ndocumented in docs/gh-actions.md: %v\nread by the box reader:           %v\nboxKeys and referenceKeys:        %v", documented, read, listed)
	}
	mentioned, err := keydoc.RepoMentions("../..", "policy.box.gh-actions.")
	if err != nil || len(mentioned) == 0 {
		t.Fatalf("README.md and docs/ name no policy.box.gh-actions key: %v", err)
	}
	for _, k := range mentioned {
		if !slices.Contains(read, k) {
			t.Errorf("the docs name policy.box.gh-actions.%s, a key the box reader does not read", k)
		}
	}
	for _, k := range documented {
		p, diags, err := ir.Check(profile(t, refProfile("      "+k+": { zz_not_a_setting: [1] }\n")))
		if err != nil || diags.HasErrors() {
			t.Fatalf("%s: profile invalid: %v\n%s", k, err, diags)
		}
		if _, diags := readBox(p); len(diags) == 0 || strings.Contains(diags.Error(), "read by nothing") {
			t.Errorf("%s: a value of the wrong shape is not refused: %v", k, diags)
		}
	}
}
