package modelfake

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	got, err := ParseScript("s.yml", []byte(`# a trial
- shell: echo hi > hi.txt
- tool: comment
  args: { body: "Hello", n: 2 }
- json: { verdict: approve, notes: [a, b] }
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Turn{
		{Shell: "echo hi > hi.txt"},
		{Tool: "comment", Args: json.RawMessage(`{"body":"Hello","n":2}`)},
		{JSON: json.RawMessage(`{"notes":["a","b"],"verdict":"approve"}`)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, err := ParseScript("s.json", []byte(`[{"text": "Done."}]`)); err != nil || !reflect.DeepEqual(got, []Turn{{Text: "Done."}}) {
		t.Errorf("JSON script: %+v, %v", got, err)
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"empty", "", "s.yml:1:1: the script is empty"},
		{"not a list", "shell: ls\n", "s.yml:1:1: a script is a non-empty list of turns"},
		{"two fields", "- shell: ls\n  text: Done.\n", "s.yml:1:3: turn 1 sets 2 of shell, text, json, tool; write exactly one"},
		{"final not last", "- text: Done.\n- shell: ls\n", "s.yml:1:3: turn 1 is a final answer (text) but is not the last turn"},
		{"unknown key", "- shel: ls\n", `s.yml:1:3: turn 1: unknown key "shel"`},
		{"not a string", "- shell: [ls]\n", "s.yml:1:10: turn 1: shell must be a non-empty string"},
		{"args without tool", "- shell: ls\n  args: {a: 1}\n", "s.yml:1:3: turn 1: args belong to a tool: turn"},
		{"args not a mapping", "- tool: x\n  args: [1]\n", "s.yml:2:9: turn 1: args must be a mapping"},
		{"turn not a mapping", "- ls\n", "s.yml:1:3: turn 1 is not a mapping"},
		{"yaml syntax", "- shell: [\n", "s.yml:1:1: YAML syntax error: did not find expected node content (a value is missing"},
		// The newcomer's case: a ": " in an unquoted value is placed at the colon, and the fix
		// is the value quoted.
		{"colon in a plain value", "- shell: ls\n- shell: git commit -qam \"policy: be kind\"\n",
			`s.yml:2:33: YAML syntax error: a ": " inside the unquoted value of shell, which YAML reads as a key (quote the value: shell: 'git commit -qam "policy: be kind"')`},
		{"colon on the first line", "- text: it's: done\n",
			`s.yml:1:13: YAML syntax error: a ": " inside the unquoted value of text, which YAML reads as a key (quote the value: text: 'it''s: done')`},
		{"tab", "- shell: ls\n\t- text: a\n", "s.yml:2:1: YAML syntax error: found a tab character that violates indentation (indent with spaces"},
		{"two documents", "- text: a\n---\n- text: b\n", "s.yml:2:1: more than one YAML document (a script is one list of turns: remove the --- and what follows)"},
		{"json key not a string", "- json: {1: a}\n", "s.yml:1:9: turn 1: json: cannot be written as JSON: json: unsupported type: map[interface {}]interface {} (JSON has string keys"},
		{"bad value, one error", "- shell: [ls]\n- text: Done.\n", "s.yml:1:10: turn 1: shell must be a non-empty string (quote it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript("s.yml", []byte(tt.script))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			// Every rejection names file:line:col, and one mistake is one error.
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != 1 || !positioned.MatchString(lines[0]) {
				t.Errorf("want one error at s.yml:LINE:COL, got %q", lines)
			}
		})
	}
}

var positioned = regexp.MustCompile(`^s\.yml:[1-9][0-9]*:[1-9][0-9]*: `)

func TestReadScriptBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "big.yml")
	if err := os.WriteFile(file, []byte("- text: "+strings.Repeat("x", MaxScriptBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadScript(file); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a script over the limit: %v", err)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "example.com:80", ":0", "nonsense"} {
		if s, err := Listen(addr, DefaultScript, nil); err == nil {
			s.Close()
			t.Errorf("Listen(%q) served", addr)
		}
	}
	s, err := Listen("127.0.0.1:0", DefaultScript, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Listen("127.0.0.1:0", []Turn{{Text: "a"}, {Shell: "b"}}, nil); err == nil {
		t.Error("Listen took a script whose final turn is not last")
	}
}
