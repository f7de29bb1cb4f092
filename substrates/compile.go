package substrates

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// Compile is the one way a profile becomes an Output, for the CLI and the golden tests alike: the
// substrate compiles, this adds a warning for every feature the profile uses that the substrate
// does not fully support, checks the Output (a failure is a substrate bug), and stamps the DO NOT
// EDIT headers naming the profile file relative to dir, the directory the Output will be written
// to. An error from the substrate is returned unchanged, so an ir.Diagnostics stays one. r is
// the profile resolved once (playbook.Resolve), for every target it is compiled to.
func Compile(s Substrate, r *resolved.Profile, dir string) (Output, error) {
	out, err := compile(s, r)
	if err != nil {
		return Output{}, err
	}
	Stamp(&out, sourcePath(r.Profile.File, dir))
	out.Keep = r.Profile.KeepPaths()
	return out, nil
}

// Lister is a Substrate that can compile without rendering its files: CompileList is Compile
// with the Data of the files it renders (workflows, configs, manifests) left nil, their paths,
// modes and headers kept, and the same warnings and errors. Diagnose uses it, so that validate does not build the bytes of every target only to
// discard them.
type Lister interface {
	CompileList(r *resolved.Profile) (Output, error)
}

// Diagnose is what Compile reports without the Output: the warnings of a compile for s, or its
// error (an ir.Diagnostics for the profile's problems). It renders no file of a Lister and stamps
// no header (rendering, hashing and stamping are most of the cost of a large fleet's compile):
// validate checks every target this way.
func Diagnose(s Substrate, r *resolved.Profile) (ir.Diagnostics, error) {
	out, err := compileWith(s, r, true)
	if err != nil {
		return nil, err
	}
	return out.Warnings, nil
}

// compile is Compile without the stamping of the headers.
func compile(s Substrate, r *resolved.Profile) (Output, error) {
	return compileWith(s, r, false)
}

// compileWith is compile, of a Lister's list of files when list is set (their Data nil).
func compileWith(s Substrate, r *resolved.Profile, list bool) (Output, error) {
	// A behavior or resource on a path autonomy owns is the profile's problem, positioned, not
	// an invalid Output.
	if diags := CheckPaths(r, s); diags.HasErrors() {
		return Output{}, diags
	}
	p := r.Profile
	lister, ok := s.(Lister)
	list = list && ok
	var out Output
	var err error
	if list {
		out, err = lister.CompileList(r)
	} else {
		out, err = s.Compile(r)
	}
	if err != nil {
		return Output{}, err
	}
	if out.Target == "" {
		out.Target = s.Name()
	}
	// The substrate may keep what it returned (a cache): stamp a copy of the file list.
	out.Files = slices.Clone(out.Files)
	out.Warnings = append(slices.Clone(out.Warnings), SupportWarnings(s, p, out.Warnings)...)
	if err := validate(&out, !list); err != nil {
		return Output{}, err
	}
	out.Warnings = out.Warnings.Sort()
	return out, nil
}

// sourcePath is the profile file as the header names it, slash-separated, by a path that does not
// depend on where the profile was compiled from: relative to the output directory when the
// profile is inside it (committed in the repository it installs into, so every clone reads the
// same), else its folder's name and file name ("sdlc/ir.yml"), the same for an identical copy of
// the profile anywhere on any machine.
func sourcePath(file, dir string) string {
	absFile, err := filepath.Abs(file)
	if err != nil {
		return filepath.Base(file)
	}
	absDir, err := filepath.Abs(dir)
	if err == nil {
		if rel, err := filepath.Rel(absDir, absFile); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	parent := filepath.Base(filepath.Dir(absFile))
	if parent == "." || parent == string(filepath.Separator) || filepath.VolumeName(parent) == parent {
		return filepath.Base(absFile) // a profile at the root of a file system
	}
	return parent + "/" + filepath.Base(absFile)
}

// Use is one place a profile relies on a feature that a substrate may support only in part.
type Use struct {
	// Feature is named as in Support.Feature: "capability:code:propose", "trigger:cron", ...
	Feature string
	Pos     ir.Pos
	// Actor is the actor that uses the feature; "" for a profile-level feature.
	Actor string
	// Capability is the scoped capability of a capability:@scope use ("agent:launch").
	Capability string
}

// ScopeEnforcer is a substrate that enforces the scope of some capabilities in full: a scope on
// one of them is supported there, whatever its Support says of capability:@scope, which covers
// the others.
type ScopeEnforcer interface {
	EnforcesScope(capability string) bool
}

// UsedFeatures lists every feature use in p, actor by actor in declaration order, then the
// profile's own. It names features the way substrates declare support for them, so that a
// substrate's declaration turns into warnings without the substrate reading the profile for it.
func UsedFeatures(p *ir.Profile) []Use {
	uses := make([]Use, 0, 8*len(p.Actors)+1)
	eachUse(p, func(u Use) { uses = append(uses, u) })
	return uses
}

// eachUse calls use with every feature use in p, in UsedFeatures' order, without collecting them.
func eachUse(p *ir.Profile, use func(Use)) {
	// Feature names repeat across a fleet: build each once.
	names := map[[2]string]string{}
	feature := func(prefix, name string) string {
		key := [2]string{prefix, name}
		if f, ok := names[key]; ok {
			return f
		}
		f := prefix + name
		names[key] = f
		return f
	}
	for _, a := range p.Actors {
		name := a.Name.Value
		add := func(feature string, pos ir.Pos) {
			use(Use{Feature: feature, Pos: pos, Actor: name})
		}
		if a.IsHuman() {
			pos := a.Kind.Pos
			if !pos.IsSet() {
				pos = a.Name.Pos
			}
			add("kind:human", pos)
		}
		for _, c := range a.Capabilities {
			add(feature("capability:", c.Name), c.Raw.Pos)
			if c.Scope != "" {
				use(Use{Feature: "capability:@scope", Pos: c.Raw.Pos, Actor: name, Capability: c.Name})
			}
		}
		for _, t := range a.Triggers {
			if k := triggerKind(t); k != "" {
				add(feature("trigger:", string(k)), t.Pos)
			}
			for _, prm := range t.Params {
				add(feature("source:", prm.Source.Value), prm.Source.Pos)
			}
		}
		if a.Timeout.Pos.IsSet() || a.Timeout.Value != 0 {
			add("field:timeout", a.Timeout.Pos)
		}
		if a.Review.Pos.IsSet() || a.Review.Value != "" {
			add("field:review", a.Review.Pos)
		}
		if a.Result != nil {
			add("field:result", a.Result.Pos)
		}
		if a.Execution != nil {
			add("field:execution", a.Execution.Pos)
		}
		if a.Prelaunch.Pos.IsSet() || a.Prelaunch.Value != "" {
			add("field:prelaunch", a.Prelaunch.Pos)
		}
	}
	if mc := p.Policy.MaxConcurrent; mc.Pos.IsSet() || mc.Value != 0 {
		use(Use{Feature: "policy:maxConcurrent", Pos: mc.Pos})
	}
}

// triggerKind is the trigger's form: its Kind, which ir.Validate sets, or else the one form it
// names, so that a profile that was only parsed lists its triggers too.
func triggerKind(t *ir.Trigger) ir.TriggerKind {
	if t.Kind != "" {
		return t.Kind
	}
	var forms []ir.TriggerKind
	if t.Cron.Pos.IsSet() {
		forms = append(forms, ir.Cron)
	}
	if t.Event.Pos.IsSet() {
		forms = append(forms, ir.Event)
	}
	if t.Dispatch.Pos.IsSet() {
		forms = append(forms, ir.Dispatch)
	}
	if len(forms) != 1 {
		return "" // none or several: an error ir.Validate reports
	}
	return forms[0]
}

// SupportWarnings warns once per feature and actor for every use of a feature s declares partial
// or unsupported. A feature s does not declare counts as unsupported: a substrate that forgot an
// entry must not pass for one that supports it. A use where own (the substrate's own warnings)
// already warns, at the same position, is left to that more specific warning.
func SupportWarnings(s Substrate, p *ir.Profile, own ir.Diagnostics) ir.Diagnostics {
	covered := map[ir.Pos]bool{}
	said := map[string]bool{} // a substrate that added these warnings itself is not warned twice
	for _, d := range own {
		if d.Pos.IsSet() {
			covered[d.Pos] = true
		}
		said[d.Message] = true
	}
	declared := map[string]Support{}
	for _, sp := range s.Support() {
		if _, dup := declared[sp.Feature]; !dup {
			declared[sp.Feature] = sp
		}
	}
	type key struct{ feature, actor string }
	seen := map[key]bool{}
	var ds ir.Diagnostics
	enforcer, _ := s.(ScopeEnforcer)
	eachUse(p, func(u Use) {
		if u.Capability != "" && enforcer != nil && enforcer.EnforcesScope(u.Capability) {
			return
		}
		sp, ok := declared[u.Feature]
		if !ok {
			sp = Support{Feature: u.Feature, Level: Unsupported, Note: "not declared by this substrate"}
		}
		if sp.Level == Supported || seen[key{u.Feature, u.Actor}] || covered[u.Pos] {
			return
		}
		seen[key{u.Feature, u.Actor}] = true
		msg := fmt.Sprintf("%s %s %s", s.Name(), sp.Level, u.Feature)
		if sp.Note != "" {
			msg += ": " + sp.Note
		}
		if u.Actor != "" {
			msg = fmt.Sprintf("actor %q: %s", u.Actor, msg)
		}
		if said[msg] {
			return
		}
		ds = append(ds, ir.Diagnostic{File: p.File, Pos: u.Pos, Severity: ir.Warning, Message: msg})
	})
	return ds
}
