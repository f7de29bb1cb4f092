package ghactions

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The manifest of a 10,000-actor fleet is several megabytes: it is written by hand, in exactly
// the bytes encoding/json's indented, non-HTML-escaping encoder gives (a test holds it to that),
// at a fraction of the cost of reflection and re-indentation.

// jsonWriter writes indented JSON.
type jsonWriter struct {
	b     *bytes.Buffer
	depth int
	first []bool // per open container: no member written yet
}

func (w *jsonWriter) newline() {
	w.b.WriteByte('\n')
	for i := 0; i < w.depth; i++ {
		w.b.WriteString("  ")
	}
}

// sep starts a member or element of the innermost container.
func (w *jsonWriter) sep() {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b.WriteByte(',')
		}
		w.first[n-1] = false
		w.newline()
	}
}

func (w *jsonWriter) open(c byte) {
	w.b.WriteByte(c)
	w.depth++
	w.first = append(w.first, true)
}

func (w *jsonWriter) close(c byte) {
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	w.depth--
	if !empty {
		w.newline()
	}
	w.b.WriteByte(c)
}

func (w *jsonWriter) key(k string) {
	w.sep()
	w.str(k)
	w.b.WriteString(": ")
}

// str writes s as encoding/json does with HTML escaping off.
func (w *jsonWriter) str(s string) {
	const hex = "0123456789abcdef"
	b := w.b
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

func (w *jsonWriter) field(k, v string) {
	w.key(k)
	w.str(v)
}

func (w *jsonWriter) strings(k string, vs []string) {
	w.key(k)
	w.open('[')
	for _, v := range vs {
		w.sep()
		w.str(v)
	}
	w.close(']')
}

// shapeJSON writes an actor's triggers and params: written once per shape (most of an actor's
// entry), then copied (unless the compile reuses nothing: Substrate.fresh).
func (c *compiler) shapeJSON(w *jsonWriter, a *actorManifest) {
	s := a.shape
	if c.emit.noReuse {
		s = nil
	}
	if s != nil && s.json != nil && s.jsonDepth == w.depth {
		w.b.Write(s.json)
		return
	}
	start := w.b.Len()
	w.key("triggers")
	w.open('[')
	for _, t := range a.Triggers {
		w.sep()
		w.open('{')
		w.field("kind", t.Kind)
		if t.Cron != "" {
			w.field("cron", t.Cron)
		}
		if t.Event != "" {
			w.field("event", t.Event)
		}
		w.field("on", t.On)
		w.strings("params", t.Params)
		w.close('}')
	}
	w.close(']')
	w.key("params")
	w.open('[')
	for _, p := range a.Params {
		w.sep()
		w.open('{')
		w.field("name", p.Name)
		w.field("source", p.Source)
		w.field("expression", p.Expr)
		w.close('}')
	}
	w.close(']')
	if s != nil && s.json == nil {
		s.json, s.jsonDepth = bytes.Clone(w.b.Bytes()[start:]), w.depth
	}
}

// manifest writes .autonomy/gh-actions/manifest.json: what was installed, with the hash of every file.
// CompileList only lists it.
func (c *compiler) manifest() {
	if c.list {
		c.add(substrates.File{Path: ManifestPath, Mode: 0o644, Header: substrates.JSONHeader}, "the manifest", ir.Pos{})
		return
	}
	byActor := map[string][]string{}
	all := []string{}
	for _, d := range c.warnings {
		s := fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Message)
		if d.Hint != "" {
			s += " (" + d.Hint + ")"
		}
		all = append(all, s)
		if name, ok := warnedActor(d.Message); ok {
			byActor[name] = append(byActor[name], s)
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, 2048*len(c.actors)+4096))
	w := &jsonWriter{b: buf}
	w.open('{')
	w.field("schema", ir.Schema)
	w.field("target", Name)
	w.key("actors")
	w.open('[')
	for _, a := range c.actors {
		w.sep()
		w.open('{')
		w.field("name", a.Name)
		w.field("kind", a.Kind)
		w.field("workflow", a.Workflow)
		w.field("behavior", a.Behavior)
		w.strings("capabilities", a.Capabilities)
		w.key("permissions")
		w.open('{')
		for _, s := range a.Permissions.sortedScopes() {
			w.field(s, string(a.Permissions[s]))
		}
		w.close('}')
		if len(a.Effects) > 0 {
			// The trusted jobs and what each may do (EffectGrant).
			w.key("effects")
			w.open('{')
			for _, kind := range a.Effects {
				w.key(kind)
				w.open('{')
				g := EffectGrant(kind)
				if kind == "apply" {
					g = a.applyGrant
				}
				for _, s := range g.sortedScopes() {
					w.field(s, string(g[s]))
				}
				w.close('}')
			}
			w.close('}')
		}
		c.shapeJSON(w, &a)
		if a.Reviewer != "" {
			w.field("reviewer", a.Reviewer)
		}
		if a.Result != "" {
			w.field("result", a.Result)
		}
		if a.ResultSchema != "" {
			w.field("resultSchema", a.ResultSchema)
		}
		if a.Timeout != 0 {
			w.key("timeoutMinutes")
			w.b.WriteString(strconv.Itoa(a.Timeout))
		}
		if a.Elicits {
			w.key("elicits")
			w.b.WriteString("true")
		}
		if len(a.Environments) > 0 {
			w.strings("environments", a.Environments)
		}
		w.strings("warnings", append([]string{}, byActor[a.Name]...))
		w.close('}')
	}
	w.close(']')
	w.strings("warnings", all)
	w.key("files")
	w.open('{')
	paths := make([]string, 0, len(c.files))
	sums := make(map[string]string, len(c.files))
	for i, h := range substrates.Hashes(c.files) {
		paths = append(paths, c.files[i].Path)
		sums[c.files[i].Path] = h
	}
	sort.Strings(paths)
	for _, p := range paths {
		w.field(p, sums[p])
	}
	w.close('}')
	w.close('}')
	buf.WriteByte('\n')
	c.add(substrates.File{Path: ManifestPath, Data: buf.Bytes(), Mode: 0o644, Header: substrates.JSONHeader}, "the manifest", ir.Pos{})
}
