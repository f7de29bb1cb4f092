package local

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/keydoc"
)

// TestBoxKeysAreDocumented: the keys docs/local.md's policy.box.local table lists are the keys
// readBox reads (its switch cases), which are boxKeys (the near-miss list); and each of them is
// read: a value of the wrong shape is refused, not carried as a key read by nothing.
func TestBoxKeysAreDocumented(t *testing.T) {
	md, err := os.ReadFile("../../docs/local.md")
	if err != nil {
		t.Fatal(err)
	}
	documented, err := keydoc.TableKeys(md, "## `policy.box.local`")
	if err != nil {
		t.Fatal(err)
	}
	read, err := keydoc.SwitchKeys(".", "readBox", "readFlowKey")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(documented)
	listed := slices.Sorted(slices.Values(boxKeys))
	if !slices.Equal(documented, read) || !slices.Equal(listed, read) {
		t.Errorf("policy.box.local keys\ndocumented in docs/local.md: %v\nread by readBox:             %v\nboxKeys:                     %v", documented, read, listed)
	}
	mentioned, err := keydoc.RepoMentions("../..", "policy.box.local.")
	if err != nil || len(mentioned) == 0 {
		t.Fatalf("README.md and docs/ name no policy.box.local key: %v", err)
	}
	for _, k := range mentioned {
		if !slices.Contains(read, k) {
			t.Errorf("the docs name policy.box.local.%s, a key the box reader does not read", k)
		}
	}
	for _, k := range documented {
		_, diags := readBox(writeBoxProfile(t, "{ "+k+": { zz_not_a_setting: [1] } }"))
		if len(diags) == 0 || strings.Contains(diags.Error(), "read by nothing") {
			t.Errorf("%s: a value of the wrong shape is not refused: %v", k, diags)
		}
	}
}
