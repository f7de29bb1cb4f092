package overlay

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
)

// MaxSize is the largest overlay read (256 KiB): an overlay is a prompt fragment.
const MaxSize = 256 << 10

var keys = []string{"schema", "slug", "title", "targets", "kind", "block", "priority", "lock_check", "ttl", "updated_at", "evidence", "status", "supersedes", "metadata"}

const example = "start with frontmatter: ---, schema: playbooks/v1, slug: …, title: …, targets: [{kind: role, ref: role/NAME}], kind: overlay, status: shadow, ---"

// Check parses one overlay file and validates it: every diagnostic, sorted.
func Check(file string, data []byte) (*Overlay, ir.Diagnostics) {
	o, diags := Parse(file, data)
	if o != nil {
		diags = append(diags, Validate(o)...)
	}
	return o, diags.Sort()
}

// Parse reads an overlay: its frontmatter (unknown keys, wrong types and YAML errors are reported)
// and its body. The overlay is nil when the file is too large or has no readable frontmatter.
func Parse(file string, data []byte) (*Overlay, ir.Diagnostics) {
	r := &source.Reporter{File: file}
	top := ir.Pos{Line: 1, Col: 1}
	if len(data) > MaxSize {
		r.Errorf(top, "an overlay is a prompt fragment; split it", "the overlay is %d bytes; the limit is %d", len(data), MaxSize)
		return nil, r.Diags
	}
	lines := source.Lines(data)
	if !source.HasFrontmatter(lines) {
		r.Errorf(top, example, "the overlay has no frontmatter")
		return nil, r.Diags
	}
	fm := source.SplitFrontmatter(r, lines, example)
	if fm.Root == nil {
		return nil, r.Diags
	}
	o := &Overlay{File: file, Priority: ir.Int{Value: DefaultPriority}}
	decode(r, o, fm.Root)
	var body []string
	for _, l := range fm.Body {
		if strings.TrimSpace(l.Text) != "" && !o.BodyPos.IsSet() {
			o.BodyPos = l.Indent()
		}
		body = append(body, l.Text)
	}
	o.Body = strings.TrimSpace(strings.Join(body, "\n"))
	if !o.BodyPos.IsSet() && len(fm.Body) > 0 {
		o.BodyPos = ir.Pos{Line: fm.Body[0].No, Col: 1}
	}
	return o, r.Diags
}

func str(r *source.Reporter, n *yaml.Node, what, ex string) ir.String {
	v, _ := source.Str(r, n, what, ex)
	return ir.String{Value: v.Value, Pos: v.Pos}
}

func scalar(r *source.Reporter, n *yaml.Node, what, ex string) ir.String {
	v, _ := source.Scalar(r, n, what, ex)
	return ir.String{Value: v.Value, Pos: v.Pos}
}

func list(r *source.Reporter, n *yaml.Node, what, ex string) []ir.String {
	var out []ir.String
	for _, v := range source.StrList(r, n, what, ex) {
		out = append(out, ir.String{Value: v.Value, Pos: v.Pos})
	}
	return out
}

func decode(r *source.Reporter, o *Overlay, root *yaml.Node) {
	source.Fields(r, root, "the frontmatter", keys, func(key string, k, v *yaml.Node) {
		switch key {
		case "schema":
			o.Schema = str(r, v, "schema", "schema: "+Schema)
		case "slug":
			o.Slug = str(r, v, "slug", "e.g. slug: flag-contradictions-explicitly")
		case "title":
			o.Title = str(r, v, "title", "one sentence saying what the overlay does")
		case "targets":
			o.TargetsPos = source.PosOf(k)
			o.Targets = targets(r, v)
		case "kind":
			o.Kind = str(r, v, "kind", "kind: overlay or kind: block-replacement")
		case "block":
			o.Block = str(r, v, "block", "e.g. block: tone")
		case "priority":
			o.Priority = priority(r, v)
		case "lock_check":
			o.LockCheck = list(r, v, "lock_check", "e.g. lock_check: [warmth, honesty]")
		case "ttl":
			o.TTL = str(r, v, "ttl", "an ISO 8601 duration, e.g. ttl: P30D")
		case "updated_at":
			o.UpdatedAt = scalar(r, v, "updated_at", "e.g. updated_at: 2026-06-01T12:00:00Z")
		case "evidence":
			o.Evidence = evidence(r, v)
		case "status":
			o.Status = str(r, v, "status", "valid: "+strings.Join(Statuses, ", "))
		case "supersedes":
			o.Supersedes = list(r, v, "supersedes", "e.g. supersedes: [older-slug]")
		case "metadata":
			if !source.IsNull(v) {
				source.Mapping(r, v, "metadata", "vendor fields go under metadata.<vendor>, e.g. metadata: {simone: {mentor: ada}}")
			}
		}
	})
}

func priority(r *source.Reporter, n *yaml.Node) ir.Int {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if v, err := strconv.ParseInt(n.Value, 0, 32); err == nil {
			return ir.Int{Value: int(v), Pos: source.PosOf(n)}
		}
	}
	r.Errorf(source.PosOf(n), "a whole number from 0 to 100; the default is 50", "priority must be an integer, not %s", source.Describe(n))
	return ir.Int{Value: DefaultPriority}
}

func targets(r *source.Reporter, n *yaml.Node) []Target {
	const ex = "e.g. targets: [{kind: role, ref: role/librarian}]"
	if n.Kind != yaml.SequenceNode {
		r.Errorf(source.PosOf(n), ex, "targets must be a list, not %s", source.Describe(n))
		return nil
	}
	var out []Target
	for i, item := range n.Content {
		what := "target " + strconv.Itoa(i+1)
		if !source.Mapping(r, item, what, ex) {
			continue
		}
		t := Target{Pos: source.PosOf(item)}
		source.Fields(r, item, what, []string{"kind", "ref"}, func(key string, _, v *yaml.Node) {
			if key == "kind" {
				t.Kind = str(r, v, what+" kind", "valid: "+strings.Join(TargetKinds, ", "))
			} else {
				t.Ref = str(r, v, what+" ref", "e.g. ref: role/librarian")
			}
		})
		out = append(out, t)
	}
	return out
}

func evidence(r *source.Reporter, n *yaml.Node) []Evidence {
	const ex = "e.g. evidence: [{kind: run, ref: run-42, note: what it showed}]"
	if source.IsNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.Errorf(source.PosOf(n), ex, "evidence must be a list, not %s", source.Describe(n))
		return nil
	}
	var out []Evidence
	for i, item := range n.Content {
		what := "evidence " + strconv.Itoa(i+1)
		if !source.Mapping(r, item, what, ex) {
			continue
		}
		e := Evidence{Pos: source.PosOf(item)}
		source.Fields(r, item, what, []string{"kind", "ref", "note"}, func(key string, _, v *yaml.Node) {
			switch key {
			case "kind":
				e.Kind = str(r, v, what+" kind", "valid: "+strings.Join(EvidenceKinds, ", "))
			case "ref":
				e.Ref = scalar(r, v, what+" ref", "an id or a path")
			case "note":
				e.Note = scalar(r, v, what+" note", "a one-liner")
			}
		})
		out = append(out, e)
	}
	return out
}
