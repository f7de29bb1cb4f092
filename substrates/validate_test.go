package substrates

import (
	"strings"
	"testing"
)

func TestValidateAcceptsAGoodOutput(t *testing.T) {
	out := output("gh-actions",
		File{Path: ".github/workflows/a.yml", Data: []byte(yamlBody), Mode: 0o644, Header: HashHeader},
		File{Path: "bin/run", Data: []byte("#!/bin/sh\n"), Mode: 0o755, Header: HashHeader},
		File{Path: "config.json", Data: []byte(jsonBody), Mode: 0o644, Header: JSONHeader},
		File{Path: ".autonomy/local/schedule.json", Data: []byte(jsonBody), Mode: 0o644, Header: JSONHeader},
		File{Path: "skills/x/SKILL.md", Data: nil, Mode: 0o644},
	)
	if err := Validate(out); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRejects(t *testing.T) {
	f := func(p string) File { return File{Path: p, Data: []byte("x\n"), Mode: 0o644} }
	tests := []struct {
		name  string
		out   *Output
		wants []string // each must appear in the error
	}{
		{"empty path", output("t", f("")), []string{`"": empty path`}},
		{"absolute", output("t", f("/etc/passwd")), []string{`"/etc/passwd": absolute path`}},
		{"dot dot", output("t", f("../x")), []string{`"../x": path leaves the output directory`}},
		{"inner dot dot", output("t", f("a/../../x")), []string{`"a/../../x": path is not clean (path.Clean gives "../x")`}},
		{"dot", output("t", f(".")), []string{`".": path "." names the output directory itself`}},
		{"not clean", output("t", f("a//b")), []string{`"a//b": path is not clean (path.Clean gives "a/b")`}},
		{"trailing slash", output("t", f("a/")), []string{`"a/": path is not clean`}},
		{"backslash", output("t", f(`a\b`)), []string{`"a\\b": path contains a backslash`}},
		{"nul", output("t", f("a\x00b")), []string{`"a\x00b": path contains a NUL byte`}},
		{"git", output("t", f(".git/hooks/pre-commit")), []string{`".git/hooks/pre-commit": path is inside a .git directory`}},
		{"nested git", output("t", f("sub/.GIT/config")), []string{`"sub/.GIT/config": path is inside a .git directory`}},
		{"ledger dir", output("t", f(".autonomy/generated/t.json")), []string{`".autonomy/generated/t.json": path is the writer's ledger directory`}},
		{"autonomy file", output("t", f(".autonomy")), []string{`".autonomy": path is the writer's ledger directory`}},
		{"duplicate", &Output{Target: "t", Files: []File{f("a"), f("a")}}, []string{`"a": listed more than once`}},
		{"case collision", output("t", f("A.yml"), f("a.yml")), []string{`"a.yml": differs from "A.yml" only in case`}},
		{"unsorted", &Output{Target: "t", Files: []File{f("b"), f("a")}}, []string{`"a": out of order: it sorts before "b"`}},
		{"file and dir", output("t", f("a"), f("a/b")), []string{`"a/b": is inside "a", which is a file of the output too`}},
		{"mode", output("t", File{Path: "a", Mode: 0o600}), []string{`"a": mode 0600`}},
		{"mode with type bits", output("t", File{Path: "a", Mode: 0o644 | 1<<31}), []string{`"a": mode `}},
		{"json empty object", output("t", File{Path: "a.json", Data: []byte("{}\n"), Mode: 0o644, Header: JSONHeader}), []string{`"a.json": a JSONHeader file must start with "{\n"`}},
		{"json no member", output("t", File{Path: "a.json", Data: []byte("{\n}\n"), Mode: 0o644, Header: JSONHeader}), []string{`"a.json": a JSONHeader file`}},
		{"json array", output("t", File{Path: "a.json", Data: []byte("[\n1]\n"), Mode: 0o644, Header: JSONHeader}), []string{`"a.json": a JSONHeader file`}},
		{"header style", output("t", File{Path: "a", Mode: 0o644, Header: 7}), []string{`"a": unknown header style 7`}},
		{"empty target", output("", f("a")), []string{`target "": empty target name`}},
		{"target with slash", output("../t", f("a")), []string{`target "../t": a target name is letters`}},
		{"target like a journal", output("t.pending", f("a")), []string{`target "t.pending": a target name cannot end in ".pending"`}},
		{
			"every bad file named",
			&Output{Target: "t", Files: []File{f("/a"), f("b/../c"), {Path: "d", Mode: 0o777}}},
			[]string{`"/a": absolute path`, `"b/../c": path is not clean`, `"d": mode 0777`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.out)
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, want := range tt.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}
