package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"capabilites", "capabilities", 1},
		{"code:proposal", "code:propose", 2},
		{"gitlab", "github", 2},
		{"FRY", "FRI", 1},
		{"kitten", "sitting", 3},
		{"loacl", "local", 1},
		{"ab", "ba", 1},
		{"ca", "abc", 3},
		{string(make([]byte, 65)), "x", 64},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}
