package ir

import "testing"

// TestNearest: a typo within the edit budget is suggested, and so is a short word missing the
// ending of a valid one (open for opened), which the budget of a short word cannot reach; a
// different word, or a short prefix of a longer one, is not.
func TestNearest(t *testing.T) {
	prTypes := []string{"opened", "edited", "closed", "reopened", "synchronize", "labeled", "review_requested"}
	for in, want := range map[string]string{
		"open":         "opened",
		"label":        "labeled",
		"close":        "closed",
		"synchronise":  "synchronize",
		"OPEN":         "opened",
		"op":           "",
		"sync":         "",
		"review":       "",
		"frobnicated":  "",
		"pull-request": "",
	} {
		if got := Nearest(in, prTypes); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Nearest("code", []string{"code:propose", "code:review", "code:merge"}); got != "" {
		t.Errorf("Nearest(code) = %q: a bare prefix is not a typo", got)
	}
}
