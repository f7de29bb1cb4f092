package local

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipKeepsCharactersWhole: a summary clipped to 200 bytes never ends inside a character.
func TestClipKeepsCharactersWhole(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 150), "a" + strings.Repeat("日本", 100), strings.Repeat("x", 250)} {
		got := clip(s)
		if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 200+len("…") {
			t.Errorf("clip(%d bytes) = %q", len(s), got)
		}
	}
	if got := clip("short"); got != "short" {
		t.Errorf("clip(short) = %q", got)
	}
}
