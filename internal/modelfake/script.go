package modelfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/ir"
)

// MaxScriptBytes bounds a script file: a script is a handful of turns.
const MaxScriptBytes = 1 << 20

// DefaultScript is what `autonomy dev model` plays without a script file: one final answer, the
// default result contract's (autonomy.result.v1), so that a session of an actor that declares no
// other contract ends at once, done, its summary saying that nothing was done and how to script
// a session (init's next steps run it: TestInitNextStepsEndDone).
var DefaultScript = []Turn{{Text: `{"status": "done", "summary": "autonomy dev model answered without asking any model, and nothing was done: script a session with autonomy dev model --script FILE (docs/quickstart.md)."}`}}

// turnKeys are the keys of one turn in a script file.
var turnKeys = []string{"shell", "text", "json", "tool", "args"}

// ReadScript reads a script file: a YAML (or JSON) list of turns, each a mapping with exactly one
// of shell (a command for the CLI's shell tool), text (the final answer), json (the final
// structured result, any value) or tool (a tool to call, with optional args, a mapping). Every
// problem is reported, each as file:line:col, with the fix.
func ReadScript(file string) ([]Turn, error) {
	data, err := bounded.ReadFile(file, MaxScriptBytes)
	if bounded.IsTooLarge(err) {
		return nil, fmt.Errorf("%s: larger than %d bytes; a script is a list of a few turns", file, MaxScriptBytes)
	}
	if err != nil {
		return nil, err
	}
	return ParseScript(file, data)
}

// ParseScript parses a script file's bytes; name is the file's name in messages.
func ParseScript(name string, data []byte) ([]Turn, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		// Placed and explained as a profile's syntax errors are: file:line:col: message (fix).
		var lines []string
		for _, d := range ir.YAMLErrorDiagnostics(name, data, err) {
			lines = append(lines, d.String())
		}
		return nil, errors.New(strings.Join(lines, "\n"))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1:1: the script is empty (write a list of turns, e.g. - text: Done.)", name)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		line := 1
		if err == nil && extra.Line > 0 {
			line = extra.Line
		}
		return nil, fmt.Errorf("%s:%d:1: more than one YAML document (a script is one list of turns: remove the --- and what follows)", name, line)
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, fmt.Errorf("%s:%d:%d: a script is a non-empty list of turns (e.g. - shell: echo hi, then - text: Done.)", name, list.Line, list.Column)
	}
	p := scriptParser{name: name}
	turns := make([]Turn, 0, len(list.Content))
	for i, n := range list.Content {
		turns = append(turns, p.turn(i, n, i == len(list.Content)-1))
	}
	if len(p.errs) > 0 {
		return nil, errors.New(strings.Join(p.errs, "\n"))
	}
	return turns, nil
}

type scriptParser struct {
	name string
	errs []string
}

func (p *scriptParser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf("%s:%d:%d: ", p.name, n.Line, n.Column)+fmt.Sprintf(format, args...))
}

// turn parses turn i; last says it is the script's last, the only place a final turn may be.
func (p *scriptParser) turn(i int, n *yaml.Node, last bool) Turn {
	var t Turn
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "turn %d is not a mapping (write one of shell:, text:, json:, tool:)", i+1)
		return t
	}
	var set []string
	before := len(p.errs)
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		switch k.Value {
		case "shell", "text", "tool":
			// Set even when wrong: the one error says what is wrong with it, not that none is set.
			set = append(set, k.Value)
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || strings.TrimSpace(v.Value) == "" {
				p.errorf(v, "turn %d: %s must be a non-empty string (quote it)", i+1, k.Value)
				continue
			}
			switch k.Value {
			case "shell":
				t.Shell = v.Value
			case "text":
				t.Text = v.Value
			default:
				t.Tool = v.Value
			}
		case "json", "args":
			if k.Value == "json" {
				set = append(set, k.Value)
			}
			raw, err := nodeJSON(v)
			if err != nil {
				p.errorf(v, "turn %d: %s: %v (JSON has string keys and finite numbers: quote such a key or value)", i+1, k.Value, err)
				continue
			}
			if k.Value == "args" {
				if v.Kind != yaml.MappingNode {
					p.errorf(v, "turn %d: args must be a mapping of the tool's arguments", i+1)
				}
				t.Args = raw
				continue
			}
			t.JSON = raw
		default:
			p.errorf(k, "turn %d: unknown key %q (a turn has %s)", i+1, k.Value, strings.Join(turnKeys, ", "))
		}
	}
	switch {
	case len(p.errs) > before:
		// A key or value is wrong: its error is the one to fix first.
	case len(set) != 1:
		p.errorf(n, "turn %d sets %d of shell, text, json, tool; write exactly one", i+1, len(set))
	case t.Args != nil && t.Tool == "":
		p.errorf(n, "turn %d: args belong to a tool: turn; add tool: NAME or remove args", i+1)
	case t.Shell == "" && t.Tool == "" && !last:
		p.errorf(n, "turn %d is a final answer (%s) but is not the last turn; move it to the end", i+1, set[0])
	}
	return t
}

// nodeJSON converts a YAML value to JSON.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot be written as JSON: %v", err)
	}
	return data, nil
}

// Listen serves script on addr, which must be a loopback address ("127.0.0.1:0" picks a free
// port), for a long-lived endpoint: unlike Start it keeps no record of requests (it would grow
// without bound) and reports each one, and each script violation, to log as one line.
func Listen(addr string, script []Turn, log func(line string)) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %v (write HOST:PORT, e.g. 127.0.0.1:4000)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("address %q is not a loopback address: the scripted model serves this machine only (e.g. 127.0.0.1:4000)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{script: script, ln: ln, url: "http://" + ln.Addr().String(), log: log, forget: true}
	s.checkScript()
	if err := s.Err(); err != nil {
		_ = ln.Close()
		return nil, err
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed on Close
	return s, nil
}

// logRequest is the one line Listen's log gets for a model request.
func logRequest(r Request) string {
	switch {
	case r.API == "":
		return ""
	case r.Aux && len(r.Tools) == 0:
		return fmt.Sprintf("%s %s (model %q): offered no tools, answered generically (not part of the script)", r.API, r.Path, r.Model)
	case r.Aux:
		return fmt.Sprintf("%s %s (model %q): offered no shell tool (%s), answered generically (not part of the script)", r.API, r.Path, r.Model, strings.Join(r.Tools, ", "))
	}
	return fmt.Sprintf("%s %s: played turn %d", r.API, r.Path, r.Turn+1)
}
