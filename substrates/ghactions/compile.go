// Package ghactions is the gh-actions substrate: it compiles a profile into one GitHub Actions
// workflow per actor, with job permissions computed from capabilities, and carries the
// behaviors, resources and derived data the jobs read. See docs/gh-actions.md. The runner that
// calls GitHub's API for an installation is package ghrun.
package ghactions

import (
	"fmt"
	"slices"
	"sort"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/wire"
)

// Name is the target name; "github" is its deprecated alias.
const Name = wire.Name

// Substrate is the gh-actions substrate.
type Substrate struct {
	// Tool is the autonomy the trusted jobs install (Self when nil), unless
	// policy.box.gh-actions.autonomy names a repository to build it from.
	Tool *Tool
	// fresh renders every part of every workflow anew, reusing no text rendered before
	// (emitter.share): the tests hold the reused text to it.
	fresh bool
}

// Name returns "gh-actions".
func (Substrate) Name() string { return Name }

// Aliases returns the older name "github".
func (Substrate) Aliases() []string { return []string{"github"} }

// Support returns the support declaration.
func (Substrate) Support() []substrates.Support { return support }

// Where the compiled installation keeps what the workflows read.
const (
	workflowDir = ".github/workflows"
	dataDir     = ".autonomy"
	// ManifestPath is the derived description of the installation: one per target, so that
	// both targets can be compiled into one directory.
	ManifestPath = wire.ManifestPath
	// HumanRequiredPath carries policy.box.risk.human_required_paths for the approval gate.
	HumanRequiredPath = dataDir + "/human-required-paths.json"
)

// WorkflowPath is where an actor's workflow is installed.
func WorkflowPath(actor string) string { return workflowDir + "/" + actor + ".yml" }

// compiler holds one compile.
type compiler struct {
	p        *ir.Profile
	r        *resolved.Profile // what each behavior is, resolved once for every target
	input    *string           // inputActor's answer, once found
	box      box
	files    []substrates.File
	paths    map[string]string // installed path → what produced it, to refuse collisions
	warnings ir.Diagnostics
	errors   ir.Diagnostics
	actors   []actorManifest
	byName   map[string]*ir.Actor
	emit     emitter
	// list leaves every file's Data nil (CompileList): the checks without the rendering.
	list bool
	// Parts every workflow shares, built on first use.
	runParts    map[string]runParts // by scriptKey
	installStep mapping
	proxyStart  mapping // modelproxy.go
	proxyEnd    seq
	toolInstall mapping
	effectSteps map[string]seq                      // by effect kind
	steps       map[string]mapping                  // sharedStep's, by key
	guarded     map[*kv]mapping                     // afterPauseCheck's guarded copies of shared steps
	shapes      map[string]*shape                   // by triggersKey (shape.go)
	perms       map[[len(scopeOrder)]Access]mapping // compiler.permissions's, by access per scope
	lastActor   *ir.Actor                           // the actor whose shape is lastShape
	lastShape   *shape
	exports     map[string]seq // the agent job's export steps, by effects
	tool        Tool
	roles       string
	realized    map[string]realized
	// humanPaths is policy.box.risk.human_required_paths, verbatim; governing the governing
	// documents (documents.roles vision and constitution), gated as their own list.
	humanPaths, governing []string
}

// Compile realizes the profile as GitHub Actions workflows.
func (s Substrate) Compile(r *resolved.Profile) (substrates.Output, error) {
	return s.compile(r, false)
}

// CompileList is Compile without rendering the files (substrates.Lister): their paths, modes and
// headers, the warnings and the errors.
func (s Substrate) CompileList(r *resolved.Profile) (substrates.Output, error) {
	return s.compile(r, true)
}

// compile is Compile, or CompileList when list is set.
func (s Substrate) compile(r *resolved.Profile, list bool) (substrates.Output, error) {
	p := r.Profile
	b, diags := readBox(p)
	tool := Self
	if s.Tool != nil {
		tool = *s.Tool
	}
	c := &compiler{p: p, r: r, box: b, paths: map[string]string{}, errors: diags, runParts: map[string]runParts{}, byName: make(map[string]*ir.Actor, len(p.Actors)), list: list,
		actors: make([]actorManifest, 0, len(p.Actors))}
	c.tool = c.pinned(tool)
	c.emit.noReuse = s.fresh
	c.emit.share(bashDefaults)
	c.emit.share(policyCheckout)
	for _, a := range p.Actors {
		c.byName[a.Name.Value] = a
	}
	c.launchEdges() // launch.go
	// A reviewer must be reachable by the proposer's trusted job (a pull request it opens fires
	// no pull_request event): give it a dispatch trigger forwarding subject.ref when it has none.
	for _, a := range p.Actors {
		if rv := c.byName[a.Review.Value]; a.Review.Value != "" && rv != nil && !rv.IsHuman() {
			c.byName[rv.Name.Value] = reachable(rv)
		}
	}
	c.humanPaths, c.governing = p.HumanRequiredPaths(), p.GoverningDocuments()
	c.add(substrates.PolicyFile(p), "the policy", p.Policy.Pos)
	if c.gated() {
		c.json(HumanRequiredPath, "policy.box.risk.human_required_paths and the governing documents", humanPathsDoc{Paths: c.humanPaths, Governing: c.governing})
	}
	for _, a := range p.Actors {
		c.actor(c.byName[a.Name.Value])
	}
	c.control()
	c.copies()
	if c.errors.HasErrors() {
		return substrates.Output{}, c.errors.Sort()
	}
	c.warnings = append(c.warnings, c.errors...) // warnings the box reader collected, if any
	c.warnings = append(c.warnings, substrates.SupportWarnings(Substrate{}, p, c.warnings)...)
	for i := range c.warnings {
		c.warnings[i].File = p.File
	}
	c.warnings = c.warnings.Sort()
	c.manifest()
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].Path < c.files[j].Path })
	return substrates.Output{Target: Name, Files: c.files, Warnings: c.warnings, Blockers: c.installProblem()}, nil
}

// add records a file, refusing a second producer of the same path.
func (c *compiler) add(f substrates.File, producer string, pos ir.Pos) {
	if first, dup := c.paths[f.Path]; dup {
		if first == producer {
			return // the same behavior shared by two actors
		}
		c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: pos, Severity: ir.Error,
			Message: fmt.Sprintf("%s and %s would both be installed at %s", first, producer, f.Path),
			Hint:    "rename or move one of them"})
		return
	}
	c.paths[f.Path] = producer
	c.files = append(c.files, f)
}

func (c *compiler) errf(pos ir.Pos, hint, format string, args ...any) {
	c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: pos, Severity: ir.Error, Message: fmt.Sprintf(format, args...), Hint: hint})
}

func (c *compiler) warnf(pos ir.Pos, hint, format string, args ...any) {
	c.warnings = append(c.warnings, ir.Diagnostic{File: c.p.File, Pos: pos, Severity: ir.Warning, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// behaviorPath is where an actor's behavior file is installed: under .autonomy, at its path in
// the profile.
func behaviorPath(a *ir.Actor) string { return dataDir + "/" + a.BehaviorFile }

// copies installs every behavior (a skill's whole folder) and every resource.
func (c *compiler) copies() {
	c.errors = append(c.errors, substrates.CopyProfile(c.r, Name, dataDir, c.add)...)
}

// actor compiles one actor's workflow and checks what GitHub cannot honor.
func (c *compiler) actor(a *ir.Actor) {
	name := a.Name.Value
	lost := false
	for _, t := range a.Triggers {
		switch t.Kind {
		case ir.Cron:
			if t.Schedule != nil {
				if d := t.Schedule.MinInterval(); d > 0 && d.Minutes() < 5 {
					c.warnf(t.Cron.Pos, "GitHub runs a schedule at most every 5 minutes; use */5 or slower", "actor %q: cron %q fires every %s, but GitHub runs schedules at most every 5 minutes (and may delay them)", name, t.Cron.Value, d)
				}
			}
		case ir.Event:
			lost = c.event(name, t) || lost
		}
	}
	if lost {
		return // the errors say why; nothing is compiled
	}
	if a.Timeout.Value > maxTimeout {
		c.warnf(a.Timeout.Pos, fmt.Sprintf("GitHub-hosted runners stop every job at %d minutes", maxTimeout), "actor %q: timeout %d is longer than GitHub runs a job", name, a.Timeout.Value)
	}
	if n := len(dispatchInputs(a)); n+1 > maxInputs { // a launch target's dispatch carries every param
		c.warnf(a.TriggersPos, "forward fewer params through dispatch", "actor %q: its dispatch forwards %d params, and GitHub accepts at most %d workflow_dispatch inputs (one is the correlation id)", name, n, maxInputs)
	}
	var wf mapping
	if a.IsHuman() {
		wf = c.humanWorkflow(a)
	} else if w := c.workflowPlaybook(a); w != nil {
		wf = c.playbookWorkflow(a, w)
	} else {
		wf = c.agentWorkflow(a)
	}
	c.add(c.workflowFile(WorkflowPath(name), wf), fmt.Sprintf("the workflow of actor %q", name), a.Name.Pos)
}

// workflowFile is the file of workflow wf at path, not rendered for CompileList.
func (c *compiler) workflowFile(path string, wf mapping) substrates.File {
	f := substrates.File{Path: path, Mode: 0o644, Header: substrates.HashHeader}
	if c.list {
		return f
	}
	f.SetBody(c.emit.document(wf))
	return f
}

// sharedStep is the step build returns, built once per compile under key and shared by every
// workflow that holds it (emitter.share).
func (c *compiler) sharedStep(key string, build func() mapping) mapping {
	if s, ok := c.steps[key]; ok {
		return s
	}
	if c.steps == nil {
		c.steps = map[string]mapping{}
	}
	s := c.emit.sharedMap(build())
	c.steps[key] = s
	return s
}

// GitHub's limits: workflow_dispatch inputs, and minutes a job runs on a hosted runner.
const (
	maxInputs  = 25
	maxTimeout = 360
)

// event checks an event trigger and reports whether GitHub cannot carry it as written: an event
// it does not know, a config it would refuse or misread, or the events cron and dispatch compile
// to. Such a trigger would be lost, so it is an error, never a warning.
func (c *compiler) event(name string, t *ir.Trigger) (lost bool) {
	ev := t.Event.Value
	if ev == "schedule" || ev == "workflow_dispatch" {
		c.errf(t.Event.Pos, "write "+map[string]string{"schedule": "cron: \"…\"", "workflow_dispatch": "dispatch: true"}[ev]+" instead", "actor %q: event %q is what autonomy compiles cron and dispatch triggers to; it cannot be declared as an event", name, ev)
		return true
	}
	if _, ok := events[ev]; !ok {
		c.errf(t.Event.Pos, ir.Suggest(ev, eventNames()), "actor %q: GitHub Actions knows no event %q, so the trigger cannot be compiled", name, ev)
		return true
	}
	if issue := configProblem(ev, t.Config); issue != nil {
		at := t.Event.Pos
		if issue.at != nil {
			at = ir.Pos{Line: issue.at.Line, Col: issue.at.Column}
		}
		c.errf(at, issue.hint, "actor %q: event %q cannot be compiled as configured: %s", name, ev, issue.msg)
		return true
	}
	if slices.Contains(ungatable, ev) {
		c.warnf(t.Event.Pos, "trigger on something only maintainers do, or dispatch the actor", "actor %q: anyone can fire %q and GitHub reports no author association to gate it on: every outsider's %s runs this agent", name, ev, map[string]string{"watch": "star", "fork": "fork", "gollum": "wiki edit"}[ev])
	}
	return false
}
