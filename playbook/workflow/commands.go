package workflow

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
)

// ArgError is a command whose words do not fit its namespace's grammar: which word, what and how
// to fix it. Word is the index of the word at fault, or -1 for the command as a whole (a word is
// missing).
type ArgError struct {
	Word         int
	Problem, Fix string
}

func (e *ArgError) Error() string {
	if e.Fix == "" {
		return e.Problem
	}
	return e.Problem + " (" + e.Fix + ")"
}

// HTTPMethods are the methods an http step may use (written in any case).
var HTTPMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// HTTPCommand is an http step's command: http METHOD URL [-H 'Name: value']...
type HTTPCommand struct {
	Method, URL string
	// Headers are the -H headers in order, each name and value trimmed.
	Headers [][2]string
}

// headerName is an HTTP header name (a token).
var headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })

// Dynamic says whether a word holds a reference ($id.stdout, $args.NAME, $secrets.NAME), whose
// value is known only when the step runs: the grammar checks only what such a word can hold.
func Dynamic(word string) bool { return RefPattern().MatchString(word) }

// ParseHTTP reads the words of an http step's command (after the namespace). It is the one
// parser of the grammar: Validate runs it on the words as written, skipping what a dynamic word
// decides (dynamic may be nil: no word is), and the runtime on the words after substitution.
func ParseHTTP(words []string, dynamic func(string) bool) (HTTPCommand, *ArgError) {
	if dynamic == nil {
		dynamic = func(string) bool { return false }
	}
	var c HTTPCommand
	if len(words) < 2 {
		return c, &ArgError{Word: -1, Problem: "an http step is http METHOD URL [-H 'Name: value']...", Fix: "e.g. http GET https://example.com/api"}
	}
	c.Method, c.URL = strings.ToUpper(words[0]), words[1]
	if !dynamic(words[0]) && !contains(HTTPMethods, c.Method) {
		return c, &ArgError{Word: 0, Problem: fmt.Sprintf("unknown http method %q", words[0]), Fix: suggestOr(c.Method, HTTPMethods, "use one of "+strings.Join(HTTPMethods, ", "))}
	}
	if !dynamic(c.URL) {
		u, err := url.Parse(c.URL)
		switch {
		case !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://"):
			return c, &ArgError{Word: 1, Problem: fmt.Sprintf("the URL %q is not http or https", c.URL), Fix: "write the URL in full, e.g. https://example.com/api"}
		case err != nil || u.Host == "":
			return c, &ArgError{Word: 1, Problem: fmt.Sprintf("the URL %q is not a URL", c.URL), Fix: "write the URL in full, e.g. https://example.com/api"}
		}
	}
	for i := 2; i < len(words); i += 2 {
		switch {
		case words[i] != "-H":
			return c, &ArgError{Word: i, Problem: fmt.Sprintf("unknown http argument %q", words[i]), Fix: "only -H 'Name: value' may follow the URL"}
		case i+1 == len(words):
			return c, &ArgError{Word: i, Problem: "-H is not followed by a header", Fix: "write -H 'Name: value', or remove -H"}
		}
		h := words[i+1]
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if dynamic(h) && (!ok || !headerName().MatchString(k)) {
			continue // the reference may hold the name, the colon or both
		}
		if !ok || !headerName().MatchString(k) {
			return c, &ArgError{Word: i + 1, Problem: fmt.Sprintf("the header %q is not Name: value", h), Fix: "e.g. -H 'Accept: application/json'"}
		}
		c.Headers = append(c.Headers, [2]string{k, strings.TrimSpace(v)})
	}
	return c, nil
}

// MCPCommand is an mcp step's command: mcp SERVER TOOL [ARGS].
type MCPCommand struct {
	Server, Tool string
	// Args are the tool's arguments the words give (nil: none; the step's stdin may be them).
	// At validation, a dynamic word's argument is left out.
	Args map[string]any
}

// ParseMCP reads the words of an mcp step's command (after the namespace): a server, a tool,
// and the tool's arguments: one JSON object word, or NAME=VALUE words (a string) and NAME:=JSON
// words (any JSON value). It is the one parser of the grammar, run by Validate on the words as
// written (skipping what a dynamic word decides; dynamic may be nil) and by the runtime on the
// words after substitution.
func ParseMCP(words []string, dynamic func(string) bool) (MCPCommand, *ArgError) {
	if dynamic == nil {
		dynamic = func(string) bool { return false }
	}
	var c MCPCommand
	switch len(words) {
	case 0:
		return c, &ArgError{Word: -1, Problem: "an mcp step names a server and a tool", Fix: "write mcp SERVER TOOL [ARGS], e.g. mcp search query q=text"}
	case 1:
		return c, &ArgError{Word: 0, Problem: fmt.Sprintf("the mcp step names the server %q and no tool", words[0]), Fix: "write mcp SERVER TOOL [ARGS], e.g. mcp " + words[0] + " query q=text"}
	}
	c.Server, c.Tool = words[0], words[1]
	if strings.HasPrefix(c.Server, "$") {
		return c, &ArgError{Word: 0, Problem: fmt.Sprintf("the server %q is a reference; an mcp step names its server literally", c.Server), Fix: "name a server of policy.box.mcp.servers literally"}
	}
	args := words[2:]
	if len(args) == 0 {
		return c, nil
	}
	c.Args = map[string]any{}
	if len(args) == 1 && (strings.HasPrefix(strings.TrimSpace(args[0]), "{") || dynamic(args[0]) && !strings.Contains(args[0], "=")) {
		if dynamic(args[0]) {
			return c, nil
		}
		if err := json.Unmarshal([]byte(args[0]), &c.Args); err != nil {
			return c, &ArgError{Word: 2, Problem: fmt.Sprintf("the tool's arguments are not a JSON object: %v", err), Fix: `write one JSON object, e.g. '{"q": "text"}'`}
		}
		return c, nil
	}
	for i, w := range args {
		if k, v, ok := strings.Cut(w, ":="); ok && k != "" && !strings.Contains(k, "=") {
			if dynamic(v) {
				continue
			}
			var j any
			if err := json.Unmarshal([]byte(v), &j); err != nil {
				return c, &ArgError{Word: 2 + i, Problem: fmt.Sprintf("argument %s:= is not JSON: %v", k, err), Fix: fmt.Sprintf("write a JSON value after :=, e.g. %s:='\"text\"' or %s:=3, or NAME=VALUE for a string", k, k)}
			}
			c.Args[k] = j
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		switch {
		case (!ok || k == "") && dynamic(w):
			continue // the reference may hold NAME=VALUE
		case !ok || k == "":
			return c, &ArgError{Word: 2 + i, Problem: fmt.Sprintf("argument %q is not NAME=VALUE, NAME:=JSON or one JSON object", w), Fix: "e.g. q=text, n:=3, or '{\"q\": \"text\"}'"}
		}
		if !dynamic(v) {
			c.Args[k] = v
		}
	}
	return c, nil
}

// suggestOr is ir.Suggest's "did you mean" for s among list, else otherwise.
func suggestOr(s string, list []string, otherwise string) string {
	if ir.Nearest(s, list) != "" {
		return ir.Suggest(s, list)
	}
	return otherwise
}
