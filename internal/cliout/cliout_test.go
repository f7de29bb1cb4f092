package cliout

import "testing"

// TestTerminalSafe: what could move the cursor, recolor the terminal or reorder the line is
// escaped; plain text, accents and emoji are printed as they are.
func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		"which one?":             "which one?",
		"café ✓ 👍":               "café ✓ 👍",
		"red\x1b[31m":            `red\x1b[31m`,
		"a\nb":                   `a\nb`,
		"which\u202e one? ABC":   `which\u202e one? ABC`,
		"x\u2066y\u2069 \u200fz": `x\u2066y\u2069 \u200fz`,
		"bad \xff byte":          `bad \xff byte`,
	} {
		if got := TerminalSafe(in); got != want {
			t.Errorf("TerminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
