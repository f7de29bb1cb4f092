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

// TestPlaybookIntFlagsDecimal: --timeout-ms and --max-output-bytes are read in decimal: 010 is
// 10 (pflag read it as octal 8), and 0x10 or 1e3 is refused with exit 2.
func TestPlaybookIntFlagsDecimal(t *testing.T) {
	for _, name := range []string{"timeout-ms", "max-output-bytes"} {
		cmd := newPlaybookRun()
		if err := cmd.Flags().Parse([]string{"--" + name, "010"}); err != nil {
			t.Fatal(err)
		}
		if got := cmd.Flags().Lookup(name).Value.String(); got != "10" {
			t.Errorf("--%s 010 read as %s, not 10", name, got)
		}
		for _, v := range []string{"0x10", "1e3", "99999999999999999999"} {
			code, _, stderr := run(t, "playbook", "run", "--"+name, v, "--pipeline", "cli true", "--state", filepath.Join(t.TempDir(), "s.db"))
			if code != 2 || !strings.Contains(stderr, fmt.Sprintf("invalid argument %q for \"--%s\" flag", v, name)) {
				t.Errorf("--%s %s: exit %d, stderr %q", name, v, code, stderr)
			}
		}
	}
}

// TestPlaybookMCPServersChecked: --mcp-servers gets the checks of a profile's
// policy.box.mcp.servers: timeoutMs from 1 to 2147483647, a command, known keys, variable names;
// each refusal exits 2 naming the server and the fix, before anything runs.
func TestPlaybookMCPServersChecked(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	for _, c := range []struct{ servers, want string }{
		{`{"s":{"command":["true"],"timeoutMs":-5}}`, `--mcp-servers: server "s": timeoutMs must be from 1 to 2147483647 milliseconds, not -5`},
		{`{"s":{"command":["true"],"timeoutMs":0}}`, `server "s": timeoutMs must be from 1 to 2147483647 milliseconds, not 0`},
		{`{"s":{"command":["true"],"timeoutMs":2147483648}}`, `server "s": timeoutMs must be from 1 to 2147483647 milliseconds, not 2147483648`},
		{`{"s":{"command":["true"],"timeoutMs":1.5}}`, `server "s": json: cannot unmarshal number 1.5`},
		{`{"s":{"comand":["true"]}}`, `server "s": json: unknown field "comand"`},
		{`{"s":{"env":["X"]}}`, `server "s" has no command`},
		{`{"s":{"command":["true"],"env":["A-B"]}}`, `server "s": env: "A-B" is not an environment variable name`},
		{`[]`, `--mcp-servers: not a JSON object of servers`},
	} {
		code, _, stderr := run(t, "playbook", "run", "--pipeline", "cli true", "--state", state, "--mcp-servers", c.servers)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("--mcp-servers %s: exit %d, stderr %q (want %q)", c.servers, code, stderr, c.want)
		}
	}
	if code, out, stderr := run(t, "playbook", "run", "--pipeline", "cli true", "--state", state, "--mcp-servers", `{"s":{"command":["true"],"timeoutMs":2147483647}}`); code != 0 {
		t.Errorf("the largest timeoutMs: exit %d\n%s%s", code, out, stderr)
	}
}
