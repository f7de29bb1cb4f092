package ir

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ScriptRun says how a script behavior runs, the same on every substrate: by its #! line when it
// has one, else by its extension. Exactly one of Shebang and Ext is set.
type ScriptRun struct {
	// Shebang is the #! line as the kernel splits it: the interpreter and at most one argument.
	// The script is run as Shebang followed by its path, so it needs no executable bit.
	Shebang []string `json:"shebang,omitempty"`
	// Ext is the extension that chooses the interpreter: .sh, .js, .mjs or .ts.
	Ext string `json:"ext,omitempty"`
}

// NodeTypeStripping is the flag that makes Node.js run a TypeScript file (Node.js 22.6 or newer).
const NodeTypeStripping = "--experimental-strip-types"

// scriptInterpreters lists, per extension, the commands tried in order; the script's path is
// appended to the first one found.
var scriptInterpreters = map[string][][]string{
	".sh":  {{"sh"}},
	".js":  {{"node"}},
	".mjs": {{"node"}},
	".ts":  {{"bun"}, {"node", NodeTypeStripping}},
}

// playbookExts are the extensions of the playbook formats (capsule, step, workflow): such a file
// given to an agent is its instructions, not a script.
var playbookExts = map[string]bool{".md": true, ".markdown": true, ".yml": true, ".yaml": true, ".json": true}

// scriptExts are the extensions a script without a #! line may have, for messages.
var scriptExts = []string{".sh", ".js", ".mjs", ".ts"}

// Interpreters returns the commands tried in order to run the script (without its path).
func (s ScriptRun) Interpreters() [][]string {
	if len(s.Shebang) > 0 {
		return [][]string{s.Shebang}
	}
	return scriptInterpreters[s.Ext]
}

// installHints says how to get each interpreter a script may need.
var installHints = map[string]string{
	"bun":     "install Bun (https://bun.sh)",
	"node":    "install Node.js (https://nodejs.org)",
	"sh":      "install a POSIX shell",
	"bash":    "install bash",
	"python3": "install Python 3 (https://www.python.org)",
	"python":  "install Python (https://www.python.org)",
	"deno":    "install Deno (https://deno.com)",
}

// InstallHint says how to install the program an interpreter command runs.
func InstallHint(program string) string {
	if h, ok := installHints[path.Base(program)]; ok {
		return h
	}
	return "install " + path.Base(program) + ", or change the script's #! line"
}

// Program is the program a shebang really runs: the interpreter, or for /usr/bin/env the
// command env looks up on PATH (after -S, its first word).
func (s ScriptRun) Program() string {
	if len(s.Shebang) == 0 {
		return ""
	}
	if path.Base(s.Shebang[0]) != "env" || len(s.Shebang) < 2 {
		return s.Shebang[0]
	}
	words := strings.Fields(s.Shebang[1])
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	for len(words) > 0 && strings.Contains(words[0], "=") {
		words = words[1:] // env NAME=value cmd
	}
	if len(words) == 0 {
		return s.Shebang[0]
	}
	return words[0]
}

// Argv returns the command that runs the script file, choosing the first interpreter that is
// installed. look finds a program (exec.LookPath); nodeVersion reports `node --version` of the
// node look found, to check that it strips TypeScript types. A missing interpreter is an error
// that says how to install it.
func (s ScriptRun) Argv(file string, look func(string) (string, error), nodeVersion func(node string) (string, error)) ([]string, error) {
	if len(s.Shebang) > 0 {
		if _, err := look(s.Shebang[0]); err != nil {
			return nil, fmt.Errorf("its #! interpreter %s is not installed: %s", s.Shebang[0], InstallHint(s.Program()))
		}
		if prog := s.Program(); prog != s.Shebang[0] {
			if _, err := look(prog); err != nil {
				return nil, fmt.Errorf("its #! line runs %s, which is not on PATH: %s", prog, InstallHint(prog))
			}
		}
		return append(append([]string(nil), s.Shebang...), file), nil
	}
	choices := scriptInterpreters[s.Ext]
	if len(choices) == 0 {
		return nil, fmt.Errorf("a %q script has no interpreter: add a #! line", s.Ext)
	}
	var old string
	for _, c := range choices {
		full, err := look(c[0])
		if err != nil {
			continue
		}
		if len(c) > 1 && c[1] == NodeTypeStripping {
			v, err := nodeVersion(full)
			if err != nil || !NodeStripsTypes(v) {
				old = strings.TrimSpace(v)
				continue
			}
		}
		return append(append([]string{full}, c[1:]...), file), nil
	}
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = c[0]
	}
	msg := fmt.Sprintf("no interpreter for a %s script is installed (tried %s)", s.Ext, strings.Join(names, ", "))
	if old != "" {
		msg = fmt.Sprintf("no interpreter for a %s script is installed: bun is not on PATH, and node %s is too old to run TypeScript", s.Ext, old)
	}
	hint := InstallHint(choices[0][0])
	if s.Ext == ".ts" {
		hint += ", or Node.js 22.6 or newer, which runs TypeScript itself"
	}
	return nil, fmt.Errorf("%s: %s", msg, hint)
}

var nodeVersionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?(\d+)\.(\d+)`) })

// NodeStripsTypes reports whether a `node --version` output is Node.js 22.6 or newer, the first
// release that runs a TypeScript file with --experimental-strip-types.
func NodeStripsTypes(version string) bool {
	m := nodeVersionRe().FindStringSubmatch(strings.TrimSpace(version))
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > 22 || major == 22 && minor >= 6
}
