package main

import (
	"strings"
	"testing"
)

// TestUsageErrorsNameTheFix: a misspelled flag is named with the nearest flag of the command, a
// wrong number of arguments with the command's usage, and a target given as an argument with
// the flag that takes it; each is a usage error (exit 2).
func TestUsageErrorsNameTheFix(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--strikt", "x"}, "autonomy: unknown flag: --strikt: did you mean --strict?\n"},
		{[]string{"runner", "--dirr", "x", "list"}, "autonomy: unknown flag: --dirr: did you mean --dir?\n"},
		{[]string{"compile", "p", "local"}, "autonomy: accepts 1 arg(s), received 2: usage: autonomy compile PROFILE [--target T] [--dir DIR] [flags] (a target is named with a flag: --target local)\n"},
		{[]string{"compile"}, "autonomy: accepts 1 arg(s), received 0: usage: autonomy compile PROFILE [--target T] [--dir DIR] [flags]\n"},
		{[]string{"validate", "--zzzzzz"}, "autonomy: unknown flag: --zzzzzz\n"},
	} {
		code, _, errOut := run(t, tc.args...)
		if code != 2 || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("%v: exit %d\n%s\nwant it to start %q", tc.args, code, errOut, tc.want)
		}
	}
}
