package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestPlaybookNumericFlags: every numeric flag of playbook run, resume and step has a range, and
// a value below it (negative, zero) or above it exits 2 naming the flag and the range, before
// anything runs; the range's ends are accepted.
func TestPlaybookNumericFlags(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	for _, c := range []struct {
		cmd  *cobra.Command
		args []string // what else the command needs to reach its checks
	}{
		{newPlaybookRun(), []string{"--pipeline", "cli true", "--state", state}},
		{newPlaybookResume(), []string{"--token", "rt_x", "--approve", "--state", state}},
		{newPlaybookStep(), []string{"--data", filepath.Join(t.TempDir(), "data.json")}},
	} {
		name := strings.Fields(c.cmd.Use)[0]
		c.cmd.Flags().VisitAll(func(f *pflag.Flag) {
			typ := f.Value.Type()
			if !strings.HasPrefix(typ, "int") && !strings.HasPrefix(typ, "uint") && !strings.HasPrefix(typ, "float") && typ != "duration" {
				return
			}
			r, ok := intFlagRanges[f.Name]
			if !ok {
				t.Errorf("playbook %s --%s: a numeric flag without a range in intFlagRanges", name, f.Name)
				return
			}
			for _, v := range []int{-5, r.min - 1, r.max + 1} { // r.min - 1 is 0
				args := append([]string{"playbook", name, "--" + f.Name, fmt.Sprint(v)}, c.args...)
				code, _, stderr := run(t, args...)
				want := fmt.Sprintf("--%s must be from %d to %d %s, not %d", f.Name, r.min, r.max, r.unit, v)
				if code != 2 || !strings.Contains(stderr, want) {
					t.Errorf("autonomy %v: exit %d (want 2), stderr %q (want %q)", args, code, stderr, want)
				}
			}
		})
	}
	for _, f := range []string{"timeout-ms", "max-output-bytes"} {
		for _, v := range []int{intFlagRanges[f].min, intFlagRanges[f].max} {
			// Accepted: the run happens (1 ms may time the step out: exit 1, not a usage error).
			if code, out, stderr := run(t, "playbook", "run", "--"+f, fmt.Sprint(v), "--pipeline", "cli true", "--state", state); code == 2 || !strings.Contains(out, `"output"`) {
				t.Errorf("--%s %d: exit %d\n%s%s", f, v, code, out, stderr)
			}
		}
	}
}
