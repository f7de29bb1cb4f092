package workflow

import (
	"net/url"
	"path"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
)

// PostconditionNamespaces are the namespaces a postcondition may use.
var PostconditionNamespaces = []string{"cli", "http"}

// checks validates a step's explicit output schema (it compiles, self-contained; the step prints
// JSON) and its postcondition (a cli or http command that splits and parses as a step's does,
// reading steps up to this one).
func (v *validator) checks(i int, who string, s *Step) {
	switch s.Namespace {
	case "node":
		v.node(who, s)
	case "web":
		v.web(who, s)
	}
	if s.Schema != nil {
		if _, err := ir.CompileResultSchema(&ir.Result{Inline: s.Schema}); err != nil {
			v.r.Errorf(s.SchemaPos, "write a self-contained JSON Schema, e.g. schema: { type: object, required: [id] }", "%s: the schema does not compile: %v", who, err)
		}
		if s.Output.Value == "text" {
			v.r.Errorf(s.Output.Pos, "write output: json, or remove schema", "%s: a step with a schema prints JSON, and this one declares output: text", who)
		}
	}
	pc := s.PostconditionStep()
	if pc == nil {
		if s.Postcondition.Pos.IsSet() {
			v.r.Errorf(s.Postcondition.Pos, "e.g. postcondition: cli test -f out/report.json", "%s: the postcondition is empty", who)
		}
		return
	}
	what := who + ": postcondition"
	switch {
	case !contains(PostconditionNamespaces, pc.Namespace):
		v.r.Errorf(s.Postcondition.Pos, "start it with cli or http, e.g. postcondition: cli test -f out/report.json", "%s: namespace %q is not one a postcondition runs (cli, http)", what, pc.Namespace)
		return
	case pc.Rest == "":
		v.r.Errorf(s.Postcondition.Pos, "e.g. postcondition: cli test -f out/report.json", "%s: the %s command names nothing to run", what, pc.Namespace)
		return
	}
	v.words(what, pc)
	v.self = true // the step's own output included
	v.refs(i, what, s.Postcondition)
	v.self = false
}

// NodeScriptExts are the script files a node step runs.
var NodeScriptExts = []string{".js", ".mjs", ".cjs"}

// node checks a node step's script, when written literally: a .js, .mjs or .cjs file, a path
// inside the workspace.
func (v *validator) node(who string, s *Step) {
	words, err := Words(s.Rest)
	if err != nil || len(words) == 0 || strings.Contains(words[0], "$") {
		return
	}
	script := words[0]
	at := v.w.place(s.Command, script, restOffset(s.Command.Value))
	clean := path.Clean(script)
	switch {
	case !HasSuffix(script, NodeScriptExts):
		v.r.Errorf(at, "give the script file first, e.g. command: node scripts/report.mjs --since 7d", "%s: node runs a script file (%s), not %q", who, strings.Join(NodeScriptExts, ", "), script)
	case path.IsAbs(script) || clean == ".." || strings.HasPrefix(clean, "../"):
		v.r.Errorf(at, "give a path inside the workspace, relative to the step's cwd", "%s: the script %q leaves the workspace", who, script)
	}
}

// HasSuffix reports whether s ends in one of sufs.
func HasSuffix(s string, sufs []string) bool {
	for _, x := range sufs {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// web checks a web step's one word: a URL (http or https, with a host) when written literally.
func (v *validator) web(who string, s *Step) {
	words, err := Words(s.Rest)
	if err != nil || len(words) == 0 {
		return
	}
	const hint = "e.g. command: web https://docs.example.com/page"
	if len(words) > 1 {
		v.r.Errorf(s.Command.Pos, hint, "%s: a web step fetches one URL, and this one has %d words", who, len(words))
		return
	}
	if strings.Contains(words[0], "$") {
		return
	}
	if u, err := url.Parse(words[0]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		v.r.Errorf(v.w.place(s.Command, words[0], restOffset(s.Command.Value)), hint, "%s: %q is not an http or https URL with a host", who, words[0])
	}
}
