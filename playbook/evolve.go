package playbook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// Evolver carries out AIP-12's evolve contract on a profile's overlay package: Reflect turns a
// proposed delta into a new overlay at status shadow, with its provenance; Promote makes a shadow
// overlay active only on a measured improvement (and, when the profile turns it on, the LLM
// judge's approval); Archive archives superseded and expired overlays. Each holds the package's
// write lock (a second writer is refused, never queued), enforces the persona lock, appends what
// it did to _log.md and regenerates _index.md; its files are written together, each through a
// temporary file renamed into place, after every check passed, so a refusal writes nothing.
type Evolver struct {
	Profile *ir.Profile
	Persona Persona
	Config  Evolve
	// Dir is the overlay package's folder (inside the profile directory); Rel the same relative
	// to it, slash-separated.
	Dir, Rel string
	// Now is when the step happens: updated_at of what it writes, ttls, the log's times.
	Now time.Time
	// Judge asks the LLM judge (policy.box.evolve.judge) and returns its final message; it is
	// called only when the judge is enabled, and must then be set.
	Judge func(ctx context.Context, prompt string) (string, error)
	// Out receives what the step did and why, line by line.
	Out io.Writer
}

// A Refusal is a step refused for a reason of the profile's, the package's or the delta's
// (each diagnostic positioned in its file), never an I/O failure.
type Refusal struct {
	Msg   string
	Diags ir.Diagnostics
}

func (r *Refusal) Error() string {
	if len(r.Diags) == 0 {
		return r.Msg
	}
	return strings.TrimRight(r.Diags.String(), "\n") + "\n" + r.Msg
}

func refuse(diags ir.Diagnostics, format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf(format, args...), Diags: diags}
}

// NewEvolver reads what evolving the profile's overlays needs: the persona, policy.box.evolve and
// the overlay package's folder (DefaultOverlayDir when the profile has none yet).
func NewEvolver(p *ir.Profile, now time.Time, out io.Writer) (*Evolver, error) {
	persona, diags := ReadPersona(p)
	cfg, ed := ReadEvolve(p)
	rel, od := overlayDir(p)
	if diags = append(append(diags, ed...), od...); diags.HasErrors() {
		return nil, refuse(diags.Sort(), "fix the profile first")
	}
	if rel == "" {
		rel = DefaultOverlayDir
	}
	return &Evolver{Profile: p, Persona: persona, Config: cfg, Rel: rel,
		Dir: filepath.Join(p.Dir, filepath.FromSlash(rel)), Now: now.UTC(), Out: out}, nil
}

// load reads the package under the write lock; a package with errors is refused, for a step
// must not build on a broken one.
func (e *Evolver) load() (*overlay.Package, error) {
	if _, err := os.Stat(e.Dir); errors.Is(err, os.ErrNotExist) {
		return &overlay.Package{Dir: e.Dir}, nil
	}
	pkg, diags, err := LoadPackage(e.Dir)
	if err != nil {
		return nil, err
	}
	var errs ir.Diagnostics
	for _, d := range diags {
		if d.Severity == ir.Error && filepath.Base(d.File) != overlay.IndexFile {
			errs = append(errs, d) // a stale index is rewritten by the step
		}
	}
	if len(errs) > 0 {
		return nil, refuse(errs, "the overlay package %s has errors: fix them first (autonomy playbook validate %s)", e.Dir, e.Dir)
	}
	if pkg == nil {
		pkg = &overlay.Package{Dir: e.Dir}
	}
	return pkg, nil
}

// find is the overlay of pkg with slug.
func find(pkg *overlay.Package, slug string) *overlay.Overlay {
	for _, o := range pkg.Overlays {
		if o.Slug.Value == slug {
			return o
		}
	}
	return nil
}

// inScope is one actor of the profile an overlay matches, on one of the profile's targets.
type inScope struct {
	Actor string
	// Skill is the actor's skill text ("" when it has none to read).
	Skill string
	// Glob says that only a glob target matched it: an unexpected match AIP-12 wants surfaced.
	Glob bool
}

// scope evaluates an overlay's match scope explicitly against the profile's actors: the actors
// it matches, and the targets that match no actor.
func (e *Evolver) scope(o *overlay.Overlay) (matched []inScope, idle []string) {
	substrates := []string{}
	for _, t := range e.Profile.Targets {
		substrates = append(substrates, t.Value)
	}
	if len(substrates) == 0 {
		substrates = []string{""}
	}
	used := map[int]bool{}
	for _, a := range e.Profile.Actors {
		if a.IsHuman() || a.BehaviorFile == "" {
			continue
		}
		text, _ := ReadRegular(filepath.Join(e.Profile.Dir, filepath.FromSlash(a.BehaviorFile)), MaxFileSize)
		behavior, _ := ir.BehaviorName(a.BehaviorFile, text)
		hit, literal := false, false
		for i, t := range o.Targets {
			one := &overlay.Overlay{Targets: []overlay.Target{t}}
			for _, sub := range substrates {
				if one.Matches(overlay.Actor{Name: a.Name.Value, Behavior: behavior, Substrate: sub}) {
					hit, used[i] = true, true
					literal = literal || !strings.ContainsAny(t.Pattern(), "*?[")
				}
			}
		}
		if !hit {
			continue
		}
		skill := ""
		if a.Skill {
			skill = string(text)
		}
		matched = append(matched, inScope{Actor: a.Name.Value, Skill: skill, Glob: !literal})
	}
	for i, t := range o.Targets {
		if !used[i] {
			idle = append(idle, t.Pattern())
		}
	}
	return matched, idle
}

// checkLock runs the persona lock on o for every actor it matches (a block-replacement is
// checked against each actor's own skill): every violation, positioned in o's file.
func (e *Evolver) checkLock(o *overlay.Overlay, matched []inScope) ir.Diagnostics {
	skills := []string{""}
	for _, m := range matched {
		if m.Skill != "" {
			skills = append(skills, m.Skill)
		}
	}
	seen := map[string]bool{}
	var diags ir.Diagnostics
	for _, skill := range skills {
		for _, v := range overlay.CheckLock(o, skill, e.Persona.Locked) {
			if seen[v.String()] {
				continue
			}
			seen[v.String()] = true
			at := e.lineOf(o, v.Trait)
			if v.Rule == "replaces-locked-block" || v.Rule == "removes-locked-phrase" {
				at = o.Block.Pos
			}
			if !at.IsSet() {
				at = ir.Pos{Line: 1, Col: 1}
			}
			diags = append(diags, ir.Diagnostic{File: o.File, Pos: at, Severity: ir.Error,
				Message: "the overlay touches a locked persona trait: " + v.String(),
				Hint:    fmt.Sprintf("leave trait %q alone (policy.box.persona.locked): a delta may add to the persona, never change what the lock holds", v.Trait)})
		}
	}
	return diags.Sort()
}

// lineOf is where o's body names the trait (its id or one of its phrases, compared as the
// linter compares them): the line and its first column; the body's start when no line does
// alone (a sentence broken across lines).
func (e *Evolver) lineOf(o *overlay.Overlay, trait string) ir.Pos {
	var words []string
	for _, t := range e.Persona.Locked {
		if t.ID == trait {
			words = append(append(words, strings.ReplaceAll(t.ID, "-", " ")), t.Phrases...)
		}
	}
	for i, l := range strings.Split(o.Body, "\n") {
		for _, w := range words {
			if overlay.MentionsPhrase(l, w) {
				return ir.Pos{Line: o.BodyPos.Line + i, Col: 1 + len(l) - len(strings.TrimLeft(l, " \t"))}
			}
		}
	}
	return o.BodyPos
}

// matchLines are the log lines of o's unexpected matches: an actor only a glob target matches,
// and a target that matches no actor of the profile.
func (e *Evolver) matchLines(step string, o *overlay.Overlay, file string, matched []inScope, idle []string) []string {
	var out []string
	for _, m := range matched {
		if m.Glob {
			out = append(out, fmt.Sprintf("%s unexpected-match %s (%s) at %s: actor %s is matched only through a glob target", e.stamp(), o.Slug.Value, file, step, m.Actor))
		}
	}
	for _, t := range idle {
		out = append(out, fmt.Sprintf("%s unexpected-match %s (%s) at %s: target %s matches no actor of the profile", e.stamp(), o.Slug.Value, file, step, t))
	}
	return out
}

func (e *Evolver) stamp() string { return e.Now.Format(time.RFC3339) }

func (e *Evolver) say(format string, args ...any) {
	if e.Out != nil {
		fmt.Fprintf(e.Out, format+"\n", args...)
	}
}

// rel is a package file's path relative to the profile directory, slash-separated, as the log
// and the messages name it.
func (e *Evolver) rel(file string) string {
	if r, err := filepath.Rel(e.Profile.Dir, file); err == nil {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(file)
}

// placeFor is where a new overlay goes in the package: KIND/NAME/SLUG.md after its first target
// (KIND/SLUG.md when that target is a glob), as AIP-12 nests a package by target.
func placeFor(o *overlay.Overlay) string {
	if len(o.Targets) == 0 {
		return o.Slug.Value + ".md"
	}
	t := o.Targets[0]
	name := path.Base(t.Pattern())
	if strings.ContainsAny(name, "*?[") || name == "." || name == "/" || name == ".." {
		return path.Join(t.Kind.Value, o.Slug.Value+".md")
	}
	return path.Join(t.Kind.Value, name, o.Slug.Value+".md")
}

// overlaysOf are the package's overlays once the step's changes are applied, for the index.
func overlaysOf(pkg *overlay.Package, changed map[string]*overlay.Overlay) []*overlay.Overlay {
	var out []*overlay.Overlay
	for _, o := range pkg.Overlays {
		if n, ok := changed[o.File]; ok {
			out = append(out, n)
			delete(changed, o.File)
			continue
		}
		out = append(out, o)
	}
	files := make([]string, 0, len(changed))
	for f := range changed {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		out = append(out, changed[f])
	}
	return out
}
