package ghrun

import (
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestDecodeTitleRefusesWhatNoLaunchWrote: a title without a params record, or a cut one,
// gives no params rather than wrong ones.
func TestDecodeTitleRefusesWhatNoLaunchWrote(t *testing.T) {
	corr, err := encodeCorrelation("0123456789abcdef", ir.LaunchParams{"A": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := decodeTitle("develop", "develop ["+corr+"]"); !ok || p["A"] != "1" {
		t.Fatalf("decode of a launch's title = %v, %v", p, ok)
	}
	for _, title := range []string{"develop", "develop [0123456789abcdef]", "develop [" + corr[:len(corr)-3] + "]", "develop [" + corr, "planner [" + corr + "]", "develop [x.!!]"} {
		if p, ok := decodeTitle("develop", title); ok {
			t.Errorf("decodeTitle(%q) = %v", title, p)
		}
	}
}
