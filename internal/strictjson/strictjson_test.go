package strictjson

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckRefusesRepeatedKeysAtAnyDepth(t *testing.T) {
	for _, c := range []struct {
		doc, key, first, pointer string
		line, col                int
	}{
		{`{"verdict":"comment","Verdict":"approve"}`, "Verdict", "verdict", "", 1, 22},
		{`{"verdict":"comment","verdict":"approve"}`, "verdict", "verdict", "", 1, 22},
		{"{\"a\":1,\n  \"findings\":[{\"x\":1},{\"path\":\"a\",\n \"PATH\":\"b\"}]}", "PATH", "path", "/findings/1", 3, 2},
		{`{"a":{"b/c":{"k":1,"` + "\u212a" + `":2}}}`, "\u212a", "k", "/a/b~1c", 1, 20},
		{`[1,{"x":[{}]},{"s":1,"S":2}]`, "S", "s", "/2", 1, 22},
	} {
		err := Check([]byte(c.doc))
		var ke *KeyError
		if !errors.As(err, &ke) {
			t.Fatalf("%s: got %v, want a KeyError", c.doc, err)
		}
		if ke.Key != c.key || ke.First != c.first || ke.Pointer != c.pointer || ke.Line != c.line || ke.Col != c.col {
			t.Errorf("%s: got %+v", c.doc, *ke)
		}
		if !strings.Contains(err.Error(), "write each key once") {
			t.Errorf("%s: the error says no fix: %v", c.doc, err)
		}
	}
}

func TestCheckAcceptsDistinctKeys(t *testing.T) {
	for _, doc := range []string{
		`{"verdict":"approve","summary":"s","findings":[{"path":"a"},{"path":"b"}]}`,
		`{"a":{"k":1},"b":{"k":2},"k":[{"k":1},{"k":2}]}`,
		`[{"a":1},{"a":1}]`, `"x"`, `1`, `{}`, `[]`,
		`{"n":-1e400,"m":1e400,"k":123456789012345678901234567890}`, // numbers beyond float64: not parsed here
	} {
		if err := Check([]byte(doc)); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	if Check([]byte(`{"a":`)) == nil {
		t.Error("a cut document passed")
	}
}

func TestUnmarshalMatchesKeysExactly(t *testing.T) {
	var v struct {
		Verdict string `json:"verdict"`
	}
	if err := Unmarshal([]byte(`{"VERDICT":"approve"}`), &v); err != nil || v.Verdict != "" {
		t.Fatalf("a key spelled otherwise was read as verdict: %q, %v", v.Verdict, err)
	}
	if err := Unmarshal([]byte(`{"verdict":"comment","Verdict":"approve"}`), &v); err == nil {
		t.Fatalf("a case twin was decoded: %q", v.Verdict)
	}
	if err := Unmarshal([]byte(`{"verdict":"comment"}`), &v); err != nil || v.Verdict != "comment" {
		t.Fatalf("got %q, %v", v.Verdict, err)
	}
	if _, err := Decode([]byte(`{"x":{"y":1,"Y":2}}`)); err == nil {
		t.Fatal("Decode passed a case twin")
	}
}
