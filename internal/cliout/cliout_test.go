package cliout

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

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

// Each word ShellWord makes is read back by a real shell as the string it was made of.
func TestShellWordIsReadBackAsItWas(t *testing.T) {
	words := []string{"api", "ui team", "a|b", "it's", "", "$(id)", "`id`", "-n", "é", "a\nb", "*", "~", "x;y", `back\slash`, "100%", "k=v", "=ls", "~root"}
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, ShellWord(w))
	}
	if ShellWord("api") != "api" || ShellWord("a|b") != "'a|b'" || ShellWord("=ls") != "'=ls'" {
		t.Errorf("api → %s, a|b → %s, =ls → %s", ShellWord("api"), ShellWord("a|b"), ShellWord("=ls"))
	}
	out, err := exec.Command("sh", "-c", `for w in `+strings.Join(quoted, " ")+`; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, words) {
		t.Errorf("the shell read back %q, want %q", got, words)
	}
}
