// Package local is the local substrate: it compiles a profile into an installation one machine
// runs (launcher configs, the schedule, the lifecycle map, the behaviors), and it is that
// installation's runner: an exec runner for agents, a human runner for people, a cron trigger
// executor, and durable session state in SQLite. See docs/local.md.
package local

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
)

// Name is the target name.
const Name = "local"

// Substrate is the local substrate. Playbooks is what its probe targets' runners host (see
// PlaybookHost; nil in a Substrate{} that only compiles).
type Substrate struct {
	Playbooks PlaybookHost
}

// Name returns "local".
func (Substrate) Name() string { return Name }

// Aliases returns none.
func (Substrate) Aliases() []string { return nil }

// Support returns the support declaration.
func (Substrate) Support() []substrates.Support { return support }

// EnforcesScope reports the capabilities whose scope the local runner enforces in full
// (substrates.ScopeEnforcer): the agent:* verbs act on the scope's actor only, and the code flow
// merges no proposal that changes a path outside code:propose's scope.
func (Substrate) EnforcesScope(capability string) bool {
	switch capability {
	case "agent:launch", "agent:list", "agent:update", "agent:cancel", "code:propose":
		return true
	}
	return false
}

// compiler holds one compile.
type compiler struct {
	p        *ir.Profile
	box      box
	files    []substrates.File
	paths    map[string]string
	warnings ir.Diagnostics
	errors   ir.Diagnostics
	actors   []*ActorConfig
	// r says what each behavior is, resolved once for every target.
	r *resolved.Profile
	// list leaves every JSON file's Data nil (CompileList): the checks without the rendering.
	list bool
	// unencoded are the files whose JSON is encoded once every actor is compiled (encodeAll).
	unencoded []unencoded
}

// Compile realizes the profile as a local installation.
func (s Substrate) Compile(r *resolved.Profile) (substrates.Output, error) {
	return s.compile(r, false)
}

// CompileList is Compile without rendering the files (substrates.Lister): their paths, modes and
// headers, the warnings and the errors.
func (s Substrate) CompileList(r *resolved.Profile) (substrates.Output, error) {
	return s.compile(r, true)
}

// compile is Compile, or CompileList when list is set.
func (Substrate) compile(r *resolved.Profile, list bool) (substrates.Output, error) {
	p := r.Profile
	b, diags := readBox(p)
	c := &compiler{p: p, r: r, box: b, paths: map[string]string{}, list: list}
	for _, d := range diags {
		if d.Severity == ir.Error {
			c.errors = append(c.errors, d)
		} else {
			c.warnings = append(c.warnings, d)
		}
	}
	sched := Schedule{Timezone: b.timezone, Entries: []Entry{}}
	rc := RunnerConfig{MaxConcurrent: p.Policy.MaxConcurrent.Value, GraceSeconds: b.grace, LogMaxBytes: b.logMax, Overlap: b.overlap, InstallPaused: b.installPaused, TargetBranch: b.targetBranch, Actors: p.ActorNames(),
		Events: eventsConfig(p, b), Asks: asksConfig(p, b)}
	if p.CodeHost.Value != "" && p.CodeHost.Value != ir.CodeHosts[0] {
		rc.CodeHost = p.CodeHost.Value
	}
	for _, a := range p.Actors {
		cfg := c.actor(a)
		c.actors = append(c.actors, cfg)
		c.jsonLater(ActorPath(cfg.Actor), fmt.Sprintf("the launcher config of actor %q", cfg.Actor), a.Name.Pos, cfg)
		for i, t := range a.Triggers {
			if t.Kind == ir.Cron && !cfg.archived() {
				sched.Entries = append(sched.Entries, Entry{Key: fmt.Sprintf("%s#%d", cfg.Actor, i), Actor: cfg.Actor, Trigger: i, Cron: t.Cron.Value, Params: params(t.Params)})
			}
		}
	}
	c.json(SchedulePath, "the schedule", ir.Pos{}, sched)
	c.json(RunnerPath, "the runner config", ir.Pos{}, rc)
	c.json(LifecyclePath, "the lifecycle map", ir.Pos{}, lifecycle(p))
	c.add(substrates.PolicyFile(p), "the policy", p.Policy.Pos)
	c.errors = append(c.errors, substrates.CopyProfile(r, Name, dataDir, c.add)...)
	if c.errors.HasErrors() {
		return substrates.Output{}, c.errors.Sort()
	}
	c.hashBehaviors()
	c.encodeAll() // encode.go
	c.warnings = append(c.warnings, substrates.SupportWarnings(Substrate{}, p, c.warnings)...)
	c.warnings = c.warnings.Sort()
	c.manifest()
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].Path < c.files[j].Path })
	return substrates.Output{Target: Name, Files: c.files, Warnings: c.warnings}, nil
}

// actor builds an actor's launcher config, installing its result schema.
func (c *compiler) actor(a *ir.Actor) *ActorConfig {
	cfg := &ActorConfig{
		Actor:          a.Name.Value,
		Kind:           "agent",
		Behavior:       dataDir + "/" + a.BehaviorFile,
		Skill:          a.Skill,
		Capabilities:   []string{},
		Params:         []Param{},
		Env:            map[string]string{},
		TimeoutMinutes: a.Timeout.Value,
		Workspace:      "shared",
		Reviewer:       a.Review.Value,
		Prelaunch:      a.Prelaunch.Value,
		Triggers:       []Trigger{},
	}
	kind := c.r.Behavior(a).Kind
	if a.IsHuman() {
		cfg.Kind = "human"
	} else if kind == resolved.Workflow {
		cfg.Skill, cfg.Workflow, cfg.Secrets = false, true, c.box.secrets
		cfg.MCP, cfg.CLI, cfg.Web = c.r.MCP, resolved.CLIOf(c.p.Policy), resolved.WebOf(c.p.Policy)
	} else if kind == resolved.Steps {
		cfg.Skill, cfg.Workflow, cfg.Steps = false, true, true
		cfg.Command = c.stepsCommand()
	} else if a.Skill {
		c.lifecycle(a, cfg)
		cfg.Command = c.agentCommand(a, cfg.Behavior)
		cfg.Verification = c.r.Behavior(a).Verification
	} else {
		cfg.Command = &Command{Argv: []string{cfg.Behavior}, Script: a.Script}
	}
	caps := make([]string, 0, len(a.Capabilities))
	for _, cp := range a.Capabilities {
		caps = append(caps, cp.Raw.Value)
	}
	cfg.Capabilities = caps
	if a.Execution != nil && a.Execution.Workspace.Value != "" {
		cfg.Workspace = a.Execution.Workspace.Value
	}
	c.sharedProposer(a, cfg)
	c.unreviewedProposer(a, cfg)
	seen := map[string]bool{}
	for _, t := range a.Triggers {
		tr := Trigger{Kind: string(t.Kind), Cron: t.Cron.Value, Event: t.Event.Value, Params: []string{}}
		tr.Types, tr.PlainComments = eventTrigger(t)
		for _, prm := range t.Params {
			tr.Params = append(tr.Params, prm.Name.Value)
			if !seen[prm.Name.Value] {
				seen[prm.Name.Value] = true
				cfg.Params = append(cfg.Params, Param{Name: prm.Name.Value, Source: prm.Source.Value})
			}
		}
		cfg.Triggers = append(cfg.Triggers, tr)
	}
	if !a.IsHuman() {
		cfg.PassEnv = c.box.env
		cfg.ToolsMax = c.box.toolsMax
		if cfg.Command != nil && cfg.Command.Preset != "" && !reflect.DeepEqual(c.box.modelPolicy, defaultModelPolicy()) {
			m := c.box.modelPolicy
			cfg.Model = &m
		}
		if cfg.Command != nil && cfg.Command.Preset != "" {
			cfg.Egress = c.box.egressPolicy() // egressbox.go
		}
	}
	cfg.Env["AUTONOMY_AGENT"] = cfg.Actor
	cfg.Env["AUTONOMY_KIND"] = cfg.Kind
	cfg.Env["AUTONOMY_CAPABILITIES"] = strings.Join(caps, " ")
	cfg.Env["AUTONOMY_BEHAVIOR"] = cfg.Behavior
	cfg.Env[substrates.PolicyEnv] = substrates.PolicyPath
	if cfg.Reviewer != "" {
		cfg.Env["AUTONOMY_REVIEWER"] = cfg.Reviewer
	}
	if c.r.Contract(a) != nil {
		cfg.Result = c.resultSchema(a)
		cfg.Env["AUTONOMY_RESULT_SCHEMA"] = cfg.Result
	}
	return cfg
}

// agentCommand is how a skill runs: the box's preset, sandboxed to its workspace and git
// directory, or the box's explicit command.
func (c *compiler) agentCommand(a *ir.Actor, behavior string) *Command {
	ch := c.box.agent
	if ch.Custom() {
		return &Command{Argv: ch.Argv, Stdin: behavior, Box: true}
	}
	p := ch.Preset
	argv := p.Argv(agent.Options{Model: c.box.model, Sandbox: agent.Sandbox{Network: c.box.network}, Result: a.Result != nil})
	return &Command{Argv: argv, Stdin: behavior, Box: true, Preset: p.Name, Package: p.Spec(), Output: string(p.Output)}
}

// stepsCommand is the agent command each step of a step playbook runs: the box's, without a
// result schema (a step's result is its final message).
func (c *compiler) stepsCommand() *Command {
	ch := c.box.agent
	if ch.Custom() {
		return &Command{Argv: ch.Argv, Box: true}
	}
	p := ch.Preset
	argv := p.Argv(agent.Options{Model: c.box.model, Sandbox: agent.Sandbox{Network: c.box.network}})
	return &Command{Argv: argv, Box: true, Preset: p.Name, Package: p.Spec(), Output: string(p.Output)}
}

// params lists a trigger's params.
func params(ps []ir.Param) []Param {
	out := make([]Param, 0, len(ps))
	for _, p := range ps {
		out = append(out, Param{Name: p.Name.Value, Source: p.Source.Value})
	}
	return out
}

// lifecycle maps every state of the catalog, mapped or not, in the catalog's order.
func lifecycle(p *ir.Profile) Lifecycle {
	l := Lifecycle{States: []StateName{}}
	for _, s := range ir.States {
		sn := StateName{State: s.Name, Name: s.Name}
		for _, ts := range p.Policy.TaskStates {
			if ts.State == s.Name && ts.Label.Value != "" {
				sn.Name, sn.Mapped = ts.Label.Value, true
			}
		}
		l.States = append(l.States, sn)
	}
	return l
}

// resultSchema installs the actor's result contract and returns its path: a named contract once
// for every actor that names it, an inline schema per actor.
func (c *compiler) resultSchema(a *ir.Actor) string {
	res := c.r.Contract(a)
	if name := res.Named.Value; name != "" {
		path := resultsDir + "/" + name + ".json"
		c.add(substrates.File{Path: path, Data: []byte(ir.ResultContracts[name] + "\n"), Mode: 0o644, Header: substrates.JSONHeader}, "the result contract "+name, res.Pos)
		return path
	}
	path := resultsDir + "/" + a.Name.Value + ".json"
	c.json(path, fmt.Sprintf("the result schema of actor %q", a.Name.Value), res.Pos, res.Inline)
	return path
}

// add records a file, refusing a second producer of the same path.
func (c *compiler) add(f substrates.File, producer string, pos ir.Pos) {
	if first, dup := c.paths[f.Path]; dup {
		if first == producer {
			return // the same behavior or contract shared by two actors
		}
		c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: pos, Severity: ir.Error,
			Message: fmt.Sprintf("%s and %s would both be installed at %s", first, producer, f.Path),
			Hint:    "rename or move one of them"})
		return
	}
	c.paths[f.Path] = producer
	c.files = append(c.files, f)
}

// json installs v as indented JSON with a header member.
func (c *compiler) json(path, producer string, pos ir.Pos, v any) {
	if c.list {
		c.add(substrates.File{Path: path, Mode: 0o644, Header: substrates.JSONHeader}, producer, pos)
		return
	}
	c.add(substrates.File{Path: path, Data: encodeJSON(v), Mode: 0o644, Header: substrates.JSONHeader}, producer, pos)
}

// manifest describes the installation: actors, warnings, and the hash of every other file.
func (c *compiler) manifest() {
	if c.list {
		c.add(substrates.File{Path: ManifestPath, Mode: 0o644, Header: substrates.JSONHeader}, "the manifest", ir.Pos{})
		return
	}
	type actor struct {
		Name         string    `json:"name"`
		Kind         string    `json:"kind"`
		Config       string    `json:"config"`
		Behavior     string    `json:"behavior"`
		Capabilities []string  `json:"capabilities"`
		Triggers     []Trigger `json:"triggers"`
		Params       []Param   `json:"params"`
		Workspace    string    `json:"workspace"`
		Timeout      int       `json:"timeoutMinutes,omitempty"`
	}
	m := struct {
		Schema   string            `json:"schema"`
		Target   string            `json:"target"`
		Actors   []actor           `json:"actors"`
		Warnings []string          `json:"warnings"`
		Files    map[string]string `json:"files"`
	}{Schema: ir.Schema, Target: Name, Actors: []actor{}, Warnings: []string{}, Files: map[string]string{}}
	for _, a := range c.actors {
		m.Actors = append(m.Actors, actor{a.Actor, a.Kind, ActorPath(a.Actor), a.Behavior, a.Capabilities, a.Triggers, a.Params, a.Workspace, a.TimeoutMinutes})
	}
	for _, d := range c.warnings {
		s := fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Message)
		if d.Hint != "" {
			s += " (" + d.Hint + ")"
		}
		m.Warnings = append(m.Warnings, s)
	}
	for i, h := range substrates.Hashes(c.files) {
		m.Files[c.files[i].Path] = h
	}
	c.json(ManifestPath, "the manifest", ir.Pos{}, m)
}

// unreviewedProposer warns of an agent holding code:propose that names no reviewer: the code flow
// refuses each of its proposals ("names no reviewer"), so none ever merges.
func (c *compiler) unreviewedProposer(a *ir.Actor, cfg *ActorConfig) {
	if cfg.Kind != "agent" || cfg.Reviewer != "" || cfg.archived() {
		return
	}
	for _, cp := range a.Capabilities {
		if cp.Name == "code:propose" {
			c.warnings = append(c.warnings, ir.Diagnostic{File: c.p.File, Pos: cp.Raw.Pos, Severity: ir.Warning,
				Message: fmt.Sprintf("actor %q holds code:propose and names no reviewer: the code flow refuses every proposal it makes, so none merges", a.Name.Value),
				Hint:    "name its reviewer with review: ACTOR (an actor holding code:review; a person reviews too)"})
			return
		}
	}
}

// sharedProposer warns of an agent holding code:propose that works in the installation root:
// launched without --branch, it commits on whatever branch the root has checked out, so what it
// commits is neither proposed nor reviewed (the standard has isolation asked for explicitly, so
// the workspace is not derived from the capability).
func (c *compiler) sharedProposer(a *ir.Actor, cfg *ActorConfig) {
	if cfg.Kind != "agent" || cfg.Workspace == "isolated" || cfg.archived() {
		return
	}
	for _, cp := range a.Capabilities {
		if cp.Name != "code:propose" {
			continue
		}
		review := ""
		if cfg.Reviewer != "" {
			review = fmt.Sprintf(", and %q never reviews it", cfg.Reviewer)
		}
		c.warnings = append(c.warnings, ir.Diagnostic{File: c.p.File, Pos: cp.Raw.Pos, Severity: ir.Warning,
			Message: fmt.Sprintf("actor %q holds code:propose in the shared workspace: launched without --branch, it commits on the branch the installation root has checked out, with no proposal%s", a.Name.Value, review),
			Hint:    "give it execution: { workspace: isolated } (a git worktree per session, proposed through the code flow), or launch it only with --branch"})
		return
	}
}

// Misplaced says why dir is not where a local installation goes: a folder inside the profile's
// own (substrates.InsideProfile), or inside another local installation (newc9 compiled from a
// subfolder of one, and made a second installation there that runs apart from the first).
func (Substrate) Misplaced(p *ir.Profile, dir string) string {
	if why := substrates.InsideProfile(p, dir); why != "" {
		return why
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if rel, err := filepath.Rel(filepath.Join(d, dataDir), abs); err == nil && filepath.IsLocal(rel) {
			return "" // a session's worktree of that installation (.autonomy/worktrees/ID): its own checkout
		}
		if fi, err := os.Lstat(filepath.Join(d, filepath.FromSlash(RunnerPath))); err == nil && fi.Mode().IsRegular() {
			return fmt.Sprintf("installing into %s, inside the local installation %s: a second installation there runs apart from it, with a store of its own (compile with --dir %s to update that one)", dir, d, d)
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
