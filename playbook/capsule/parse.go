package capsule

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

// MaxSize is the largest capsule playbook read (1 MiB).
const MaxSize = 1 << 20

const example = "start the file with frontmatter: ---, type: playbook, title: …, version: \"1.0\", status: draft, owner: …, readers: [agent], scope: single-session, tags: [a-tag], ---"

// Parse reads a capsule playbook: its frontmatter fields with their positions and its ##
// sections. It reports only what keeps a file from being read (YAML syntax, a wrongly typed
// field); the checks are Validate's. The playbook is nil only when the file is too large.
func Parse(file string, data []byte) (*Playbook, ir.Diagnostics) {
	r := &source.Reporter{File: file}
	if len(data) > MaxSize {
		r.Errorf(ir.Pos{Line: 1, Col: 1}, "split the playbook", "the playbook is %d bytes; the limit is %d", len(data), MaxSize)
		return nil, r.Diags
	}
	lines := source.Lines(data)
	fm := source.SplitFrontmatter(r, lines, example)
	p := &Playbook{File: file, HasFrontmatter: fm.Pos.IsSet(), FrontmatterPos: fm.Pos, PipelineFields: map[string]bool{}}
	if fm.Root != nil {
		frontmatter(r, p, fm.Root)
	}
	p.unread = p.HasFrontmatter && fm.Root == nil
	p.unclosed = p.HasFrontmatter && fm.Body == nil
	if len(fm.Body) > 0 {
		p.BodyStart = fm.Body[0].No
	}
	p.Sections = sections(fm.Body)
	return p, r.Diags
}

func frontmatter(r *source.Reporter, p *Playbook, root *yaml.Node) {
	list := func(v *yaml.Node, key string) []ir.String {
		var out []ir.String
		for _, s := range source.StrList(r, v, key+":", "write a list, e.g. "+key+": [a, b]") {
			out = append(out, ir.String{Value: s.Value, Pos: s.Pos})
		}
		return out
	}
	source.Fields(r, root, "the frontmatter", nil, func(key string, k, v *yaml.Node) {
		if f := scalarField(p, key); f != nil {
			s, _ := source.Scalar(r, v, key+":", "")
			*f = ir.String{Value: s.Value, Pos: s.Pos}
			return
		}
		switch key {
		case "owner", "author":
			if p.Owner.Pos.IsSet() {
				return
			}
			p.Owner = ir.String{Value: key, Pos: source.PosOf(k)}
			if source.IsNull(v) || v.Kind == yaml.ScalarNode && strings.TrimSpace(v.Value) == "" {
				r.Errorf(source.PosOf(v), "e.g. owner: release-team, or author: {name: …, role: …}", "%s: has no value", key)
			}
		case "readers":
			p.ReadersPos = source.PosOf(k)
			p.Readers = list(v, key)
		case "tags":
			p.TagsPos = source.PosOf(k)
			p.Tags = list(v, key)
		case "calls":
			p.Calls = list(v, key)
		case "changelog":
			p.ChangelogPos = source.PosOf(k)
			if v.Kind == yaml.SequenceNode {
				p.Changelog = len(v.Content)
			} else {
				r.Errorf(source.PosOf(v), "write a list, one entry per version, e.g. changelog: [{version: \"1.1\", change: …}]", "changelog: must be a list, not %s", source.Describe(v))
			}
		case "composes_into":
			p.ComposesInto = compositions(r, v)
		case "concierge_path":
			p.ConciergePath = v.Kind == yaml.ScalarNode && v.Value == "true"
		case "stages", "positions", "artifact_types":
			p.PipelineFields[key] = !source.IsNull(v)
		case "forward_only":
			p.PipelineFields[key] = v.Kind == yaml.ScalarNode && v.Value == "true"
		}
	})
}

// scalarField returns the field of p that the frontmatter key holds as a plain scalar, or nil
// when key is not such a field.
func scalarField(p *Playbook, key string) *ir.String {
	switch key {
	case "uid":
		return &p.UID
	case "type":
		return &p.Type
	case "title":
		return &p.Title
	case "version":
		return &p.Version
	case "status":
		return &p.Status
	case "scope":
		return &p.Scope
	case "trigger":
		return &p.Trigger
	case "created":
		return &p.Created
	case "locked_by":
		return &p.LockedBy
	case "locked_at":
		return &p.LockedAt
	case "supersedes":
		return &p.Supersedes
	case "superseded_by":
		return &p.SupersededBy
	case "target_artifact_type":
		return &p.TargetArtifactType
	case "verdict_format":
		return &p.VerdictFormat
	case "mode":
		return &p.Mode
	}
	return nil
}

func compositions(r *source.Reporter, n *yaml.Node) []Composition {
	const ex = "e.g. composes_into: [{playbook: run-release-test-plan, role: stage-3}]"
	if n.Kind != yaml.SequenceNode {
		r.Errorf(source.PosOf(n), ex, "composes_into: must be a list, not %s", source.Describe(n))
		return nil
	}
	var out []Composition
	for _, item := range n.Content {
		if !source.Mapping(r, item, "an entry of composes_into:", ex) {
			continue
		}
		c := Composition{Pos: source.PosOf(item)}
		source.Fields(r, item, "an entry of composes_into:", []string{"playbook", "role"}, func(key string, _, v *yaml.Node) {
			s, _ := source.Str(r, v, key+":", ex)
			if key == "playbook" {
				c.Playbook = ir.String{Value: s.Value, Pos: s.Pos}
			} else {
				c.Role = ir.String{Value: s.Value, Pos: s.Pos}
			}
		})
		if !c.Playbook.Pos.IsSet() {
			r.Errorf(c.Pos, ex, "an entry of composes_into: names no playbook")
			continue
		}
		out = append(out, c)
	}
	return out
}

// sections splits the body at its ## headings (outside code fences).
func sections(body []source.Line) []*Section {
	var out []*Section
	var cur *Section
	var fence source.Fence
	for _, l := range body {
		if !fence.Next(l.Text) {
			if level, text := source.Heading(l.Text); level == 2 {
				cur = &Section{Title: ir.String{Value: text, Pos: l.Indent()}}
				out = append(out, cur)
				continue
			}
		}
		if cur != nil {
			cur.Lines = append(cur.Lines, Line{Pos: l.Indent(), Text: l.Text})
		}
	}
	return out
}

// Text is the section's text, trimmed.
func (s *Section) Text() string {
	var b strings.Builder
	for _, l := range s.Lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

func equalFold(a, b string) bool { return strings.EqualFold(strings.TrimSpace(a), b) }
