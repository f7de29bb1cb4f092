package playbook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// Provenance is where a delta comes from, recorded as one more evidence entry of the overlay.
type Provenance struct {
	// Kind is an evidence kind: run for a session, reflection for a file.
	Kind, Ref, Note string
}

// Reflect curates a proposed delta (the PLAYBOOK.md text data, named file in messages) into a new
// overlay of the package at status shadow, with updated_at set to now and prov added to its
// evidence. It is refused, writing nothing, when the delta does not validate (each problem at its
// line and column), is not at status shadow, reuses a slug of the package, or touches a locked
// persona trait for any actor it matches (AIP-12: such a candidate is discarded). It returns the
// new overlay's path relative to the profile, and its slug.
func (e *Evolver) Reflect(file string, data []byte, prov Provenance) (string, string, error) {
	o, diags := overlay.Check(file, data)
	if diags.HasErrors() || o == nil {
		return "", "", refuse(diags, "the delta is not a valid overlay: nothing written")
	}
	if o.Status.Value != "shadow" {
		d := ir.Diagnostic{File: file, Pos: o.Status.Pos, Severity: ir.Error, Message: fmt.Sprintf("a delta enters at status: shadow, not %s", o.Status.Value),
			Hint: "write status: shadow; autonomy playbook promote makes it active on a measured improvement"}
		return "", "", refuse(ir.Diagnostics{d}, "nothing written")
	}
	var out string
	err := e.locked(func() error {
		pkg, err := e.load()
		if err != nil {
			return err
		}
		if old := find(pkg, o.Slug.Value); old != nil {
			d := ir.Diagnostic{File: file, Pos: o.Slug.Pos, Severity: ir.Error, Message: fmt.Sprintf("slug %q is already the overlay %s", o.Slug.Value, e.rel(old.File)),
				Hint: fmt.Sprintf("a delta is a new overlay: give it its own slug, and write supersedes: [%s] to replace that one", o.Slug.Value)}
			return refuse(ir.Diagnostics{d}, "nothing written")
		}
		matched, idle := e.scope(o)
		if lock := e.checkLock(o, matched); len(lock) > 0 {
			return refuse(lock, "the delta touches the persona lock: discarded, nothing written")
		}
		target := filepath.Join(e.Dir, filepath.FromSlash(placeFor(o)))
		if _, err := os.Lstat(target); err == nil {
			return refuse(nil, "%s already exists: give the delta another slug", e.rel(target))
		}
		text, err := editFrontmatter(data, func(root *yaml.Node) {
			setKey(root, "status", strNode("shadow"))
			setKey(root, "updated_at", strNode(e.stamp()))
			appendEvidence(root, prov)
		})
		if err != nil {
			return refuse(nil, "%s: %v", file, err)
		}
		n, nd := overlay.Check(target, text)
		if nd.HasErrors() || n == nil {
			return refuse(nd, "the overlay as it would be written does not validate: nothing written")
		}
		out = e.rel(target)
		log := append([]string{fmt.Sprintf("%s reflect %s (%s): new overlay at status shadow, from %s %s", e.stamp(), n.Slug.Value, out, prov.Kind, prov.Ref)},
			e.matchLines("reflect", n, out, matched, idle)...)
		for _, l := range log {
			e.say("%s", l)
		}
		return e.commit(write{files: map[string][]byte{target: text}, overlays: overlaysOf(pkg, map[string]*overlay.Overlay{target: n}), log: log})
	})
	return out, o.Slug.Value, err
}

func appendEvidence(root *yaml.Node, prov Provenance) {
	item := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, kv := range [][2]string{{"kind", prov.Kind}, {"ref", prov.Ref}, {"note", prov.Note}} {
		if kv[1] != "" {
			item.Content = append(item.Content, strNode(kv[0]), strNode(kv[1]))
		}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "evidence" {
			if v := root.Content[i+1]; v.Kind == yaml.SequenceNode {
				v.Content = append(v.Content, item)
				return
			}
			root.Content[i+1] = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}}
			return
		}
	}
	root.Content = append(root.Content, strNode("evidence"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}})
}

// Promote makes the shadow overlay slug active, and archives the overlays it supersedes. It is
// refused, writing nothing, unless: the overlay is at status shadow; it passes the persona lock
// for every actor it matches (checked again: the persona may have changed since it was
// reflected); the profile declares an evaluation and measure, run on it, shows an improvement
// (Measurement.Improved); and, when the profile enables the judge, the judge passes it.
func (e *Evolver) Promote(ctx context.Context, slug string, measure func(*overlay.Overlay, []string) (*Measurement, error)) error {
	return e.locked(func() error {
		pkg, err := e.load()
		if err != nil {
			return err
		}
		o := find(pkg, slug)
		if o == nil {
			return refuse(nil, "%s has no overlay %q", e.Rel, slug)
		}
		file := e.rel(o.File)
		if s := o.Status.Value; s != "shadow" {
			d := ir.Diagnostic{File: o.File, Pos: o.Status.Pos, Severity: ir.Error, Message: fmt.Sprintf("overlay %q is %s: only a shadow overlay is promoted", slug, s),
				Hint: "reflect a new delta (it enters at status: shadow) to change an overlay"}
			return refuse(ir.Diagnostics{d}, "not promoted")
		}
		matched, idle := e.scope(o)
		if lock := e.checkLock(o, matched); len(lock) > 0 {
			return refuse(lock, "not promoted: the overlay touches the persona lock")
		}
		if e.Config.Evaluation == nil {
			return refuse(nil, "not promoted: %s declares no evaluation, so no improvement can be measured; declare one under policy.box.evolve.evaluation (e.g. evaluation: { metric: score, field: score, minSessions: 5, minImprovement: 0.05 }; docs/playbooks.md, \"Evolving overlays\")", e.Profile.File)
		}
		actors := make([]string, len(matched))
		for i, m := range matched {
			actors[i] = m.Actor
		}
		m, err := measure(o, actors)
		if err != nil {
			return err
		}
		for _, l := range m.Lines() {
			e.say("%s", l)
		}
		if !m.Improved {
			return refuse(nil, "not promoted: %s", m.Reason)
		}
		verdict, err := e.judge(ctx, o)
		if err != nil {
			return err
		}
		return e.promoteWrite(pkg, o, file, matched, idle, m, verdict)
	})
}

func (e *Evolver) promoteWrite(pkg *overlay.Package, o *overlay.Overlay, file string, matched []inScope, idle []string, m *Measurement, verdict string) error {
	files := map[string][]byte{}
	changed := map[string]*overlay.Overlay{}
	set := func(x *overlay.Overlay, status string) error {
		text, n, err := e.restatus(x, status)
		files[x.File], changed[x.File] = text, n
		return err
	}
	if err := set(o, "active"); err != nil {
		return err
	}
	log := []string{fmt.Sprintf("%s promote %s (%s): shadow → active; %s%s", e.stamp(), o.Slug.Value, file, m.Summary(), verdict)}
	for _, s := range o.Supersedes {
		old := find(pkg, s.Value)
		if old == nil || old.Status.Value == "archived" {
			continue
		}
		if err := set(old, "archived"); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("%s archive %s (%s): superseded by %s", e.stamp(), old.Slug.Value, e.rel(old.File), o.Slug.Value))
	}
	log = append(log, e.matchLines("promote", o, file, matched, idle)...)
	for _, l := range log {
		e.say("%s", l)
	}
	return e.commit(write{files: files, overlays: overlaysOf(pkg, changed), log: log})
}

// Archive archives the overlays slugs names, or with none every overlay that is superseded (named
// in the supersedes of an active overlay) or expired (an active one whose ttl ran out by Now).
// Archived overlays stay on disk for audit and are never woven. Nothing to archive writes nothing.
func (e *Evolver) Archive(slugs []string) (int, error) {
	n := 0
	err := e.locked(func() error {
		pkg, err := e.load()
		if err != nil {
			return err
		}
		why, err := e.toArchive(pkg, slugs)
		if err != nil {
			return err
		}
		if len(why) == 0 {
			e.say("nothing to archive in %s: no overlay is superseded or expired", e.Rel)
			return nil
		}
		files := map[string][]byte{}
		changed := map[string]*overlay.Overlay{}
		var log []string
		for _, o := range pkg.Overlays {
			reason, ok := why[o.Slug.Value]
			if !ok {
				continue
			}
			text, x, err := e.restatus(o, "archived")
			if err != nil {
				return err
			}
			files[o.File], changed[o.File] = text, x
			log = append(log, fmt.Sprintf("%s archive %s (%s): %s", e.stamp(), o.Slug.Value, e.rel(o.File), reason))
		}
		for _, l := range log {
			e.say("%s", l)
		}
		n = len(log)
		return e.commit(write{files: files, overlays: overlaysOf(pkg, changed), log: log})
	})
	return n, err
}

// restatus is the overlay file o with its status set (and updated_at now), and the overlay it
// then is; it must still validate.
func (e *Evolver) restatus(o *overlay.Overlay, status string) ([]byte, *overlay.Overlay, error) {
	data, err := overlay.ReadFile(o.File, overlay.MaxSize)
	if err != nil {
		return nil, nil, err
	}
	text, err := e.setStatus(data, status)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", o.File, err)
	}
	n, nd := overlay.Check(o.File, text)
	if nd.HasErrors() || n == nil {
		return nil, nil, refuse(nd, "%s as it would be written does not validate: nothing written", o.File)
	}
	return text, n, nil
}

// toArchive maps each overlay to archive to why.
func (e *Evolver) toArchive(pkg *overlay.Package, slugs []string) (map[string]string, error) {
	why := map[string]string{}
	if len(slugs) > 0 {
		var missing []string
		for _, s := range slugs {
			switch o := find(pkg, s); {
			case o == nil:
				missing = append(missing, s)
			case o.Status.Value == "archived":
				e.say("%s (%s) is archived already", s, e.rel(o.File))
			default:
				why[s] = "archived by hand (was " + o.Status.Value + ")"
			}
		}
		if len(missing) > 0 {
			return nil, refuse(nil, "%s has no overlay %s: nothing archived", e.Rel, strings.Join(quoteAll(missing), ", "))
		}
		return why, nil
	}
	for _, o := range pkg.Overlays {
		if o.Status.Value != "active" {
			continue
		}
		if exp, ok := o.Expiry(); ok && !e.Now.Before(exp) {
			why[o.Slug.Value] = fmt.Sprintf("expired: its ttl %s from updated_at %s ran out at %s", o.TTL.Value, o.UpdatedAt.Value, exp.UTC().Format("2006-01-02T15:04:05Z07:00"))
			continue
		}
		for _, s := range o.Supersedes {
			if old := find(pkg, s.Value); old != nil && old.Status.Value != "archived" && why[s.Value] == "" {
				why[s.Value] = "superseded by " + o.Slug.Value
			}
		}
	}
	return why, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	sort.Strings(out)
	return out
}
