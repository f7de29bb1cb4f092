package local

import "testing"

// The answer line a parked step session prints can be pasted into a shell: a select's choices
// are words of their own ("--answer api|ui" was a pipe into a command ui), a confirm's too.
func TestAnswerHowIsShellWords(t *testing.T) {
	for _, c := range []struct {
		kind      string
		options   []string
		how, more string
	}{
		{"select", []string{"api", "ui"}, "--answer api", "or --answer with another of: ui"},
		{"select", []string{"ui team", "a|b", "it's"}, "--answer 'ui team'", `or --answer with another of: 'a|b' 'it'\''s'`},
		{"select", []string{"only"}, "--answer only", ""},
		{"select", nil, "--answer TEXT", ""},
		{"confirm", nil, "--approve", "or --deny to say no"},
		{"input", nil, "--answer TEXT", ""},
	} {
		how, more := answerHow(c.kind, c.options)
		if how != c.how || more != c.more {
			t.Errorf("%s %q: %q, %q; want %q, %q", c.kind, c.options, how, more, c.how, c.more)
		}
	}
}
