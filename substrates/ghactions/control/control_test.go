package control

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for body, want := range map[string]*Command{
		"/agent status":                          {Verb: "status", Args: []string{}},
		"/agent develop add a test\nand docs":    {Verb: "develop", Args: []string{"add", "a", "test"}, Text: "add a test\nand docs"},
		"/Agent Approve abc ship it\r\nthanks":   {Verb: "approve", Args: []string{"abc", "ship", "it"}, Text: "abc ship it\nthanks"},
		"/agent":                                 {},
		"/agent\nsecond line":                    {},
		"/agent\tcancel 7":                       {Verb: "cancel", Args: []string{"7"}, Text: "7"},
		"/agentstatus":                           nil,
		" /agent status":                         nil,
		"please /agent status":                   nil,
		"":                                       nil,
		"/age":                                   nil,
		"> /agent approve abc (quoted in reply)": nil,
	} {
		got, ok := Parse(body)
		if want == nil {
			if ok {
				t.Errorf("Parse(%q) = %+v, want no command", body, got)
			}
			continue
		}
		if !ok {
			t.Errorf("Parse(%q): no command, want %+v", body, *want)
			continue
		}
		if want.Args == nil {
			want.Args = got.Args
		}
		if got.Verb != want.Verb || got.Text != want.Text || (len(want.Args) > 0 && !reflect.DeepEqual(got.Args, want.Args)) {
			t.Errorf("Parse(%q) = %+v, want %+v", body, got, *want)
		}
	}
}
