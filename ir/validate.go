package ir

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/ir/cron"
)

// Limits of the standard's values.
const (
	// MaxActorName bounds actor names: they become file names, job ids and env values, and 63 is
	// the longest label DNS and most schedulers accept.
	MaxActorName = 63
	// MaxTimeout bounds timeout, in minutes (one week): a longer run is a mistake, not a bound.
	MaxTimeout = 7 * 24 * 60
	// MaxConcurrentLimit bounds policy.maxConcurrent: more sessions at once than that on one
	// machine or one repository is a mistake, not a limit (omit it for no limit).
	MaxConcurrentLimit = 10_000
)

var (
	actorNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) })
	paramNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`) })
	eventNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`) })
	scopeRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.*/-]+$`) })
)

// Validate checks a loaded profile against every rule of the standard and returns all problems,
// sorted. It reads the profile directory to resolve behaviors and resources.
func Validate(p *Profile) Diagnostics {
	v := &validator{r: &reporter{file: p.File}, p: p, paths: newPathChecker(p.Dir)}
	v.profile()
	return v.r.diags.Sort()
}

type validator struct {
	r      *reporter
	p      *Profile
	paths  *pathChecker
	actors map[string]*Actor
	// unsure marks actors with an unknown capability: checks that depend on what an actor holds
	// are skipped for them, so one typo is reported once instead of cascading.
	unsure map[*Actor]bool
	crons  map[string]*cron.Schedule
	// behaviors caches each behavior value's resolution: thousands of actors commonly share one.
	behaviors map[string]behaviorResult
}

func (v *validator) profile() {
	p := v.p
	switch {
	case !p.Schema.Pos.IsSet() && !p.typos["schema"]:
		v.r.errorf(Pos{1, 1}, "add `schema: "+Schema+"` as the first line", "the profile has no schema")
	case p.Schema.Value != "" && p.Schema.Value != Schema:
		v.r.errorf(p.Schema.Pos, "write schema: "+Schema, "schema %q is not supported; this tool reads %s", p.Schema.Value, Schema)
	}
	v.targets()
	if p.CodeHost.Pos.IsSet() && p.CodeHost.Value != "" && !contains(CodeHosts, p.CodeHost.Value) {
		v.r.errorf(p.CodeHost.Pos, suggest(p.CodeHost.Value, CodeHosts), "unknown codeHost %q", p.CodeHost.Value)
	}

	v.actors = make(map[string]*Actor, len(p.Actors))
	v.unsure = map[*Actor]bool{}
	v.crons = map[string]*cron.Schedule{}
	for _, a := range p.Actors {
		v.actors[a.Name.Value] = a
	}
	if !p.ActorsKey.Pos.IsSet() && !p.typos["actors"] && !p.typos["agents"] {
		v.r.errorf(Pos{1, 1}, "declare them under actors:, "+actorExample, "the profile has no actors")
	}
	for _, a := range p.Actors {
		v.actor(a)
	}
	// Reviews read other actors' capabilities, so they are checked once every actor has been.
	for _, a := range p.Actors {
		v.review(a)
	}
	v.policy()
	v.resources()
	v.documents()
}

func (v *validator) targets() {
	p := v.p
	if !p.TargetsPos.IsSet() {
		if p.typos["targets"] {
			return
		}
		v.r.errorf(Pos{1, 1}, targetsExample(), "the profile has no targets")
		return
	}
	valid := targetSpellings()
	seen := map[string]Pos{}
	for _, t := range p.Targets {
		name := t.Value
		if canon, ok := TargetShort(name); ok {
			name = canon
		} else if canon, ok := TargetAlias(name); ok {
			v.r.warnf(t.Pos, "write "+canon, "target %q is a deprecated alias of %q", name, canon)
			name = canon
		} else if !contains(Targets(), name) {
			v.r.errorf(t.Pos, suggest(name, valid), "unknown target %q", name)
			continue
		}
		if first, dup := seen[name]; dup {
			what := fmt.Sprintf("%q", name)
			if t.Value != name {
				what = fmt.Sprintf("%q (as %q)", name, t.Value)
			}
			v.r.warnf(t.Pos, "remove it", "target %s is listed twice, first at %s", what, firstAt(first, t.Pos))
		}
		seen[name] = t.Pos
	}
}

func (v *validator) actor(a *Actor) {
	name := a.Name.Value
	switch {
	case len(name) > MaxActorName:
		v.r.errorf(a.Name.Pos, "shorten it", "actor name %q is %d characters; the limit is %d", name, len(name), MaxActorName)
	case !actorNameRe().MatchString(name):
		why := ""
		if odd := oddRune(name); odd != "" {
			why = ": it has " + odd // a homoglyph looks valid: name the character
		}
		v.r.errorf(a.Name.Pos, "use lowercase letters, digits, - and _, starting with a letter, e.g. "+strings.Trim(sanitizeName(name), "-_"), "actor name %q is not valid%s", name, why)
	}
	if a.Kind.Pos.IsSet() && a.Kind.Value != "" && !contains(Kinds, a.Kind.Value) {
		v.actorf(a, Error, a.Kind.Pos, suggest(a.Kind.Value, Kinds), "unknown kind %q", a.Kind.Value)
	}
	v.behavior(a)
	v.capabilities(a)
	v.triggers(a)

	if a.Timeout.Pos.IsSet() && (a.Timeout.Value < 1 || a.Timeout.Value > MaxTimeout) {
		v.actorf(a, Error, a.Timeout.Pos, fmt.Sprintf("give minutes from 1 to %d", MaxTimeout), "timeout %d is out of range", a.Timeout.Value)
	}
	if res := a.Result; res != nil {
		switch {
		case res.Named.Value == NoResult && a.IsHuman():
			// A person's session is never done by an exit status: nothing is weakened.
		case res.Named.Value == NoResult:
			v.actorf(a, Warning, res.Named.Pos, "remove result to get the default contract ("+DefaultContract+"), or name a contract",
				"result.schema none: a session is done on exit status 0 alone, unverified, which is weaker than a result that validates")
		case res.Named.Value != "":
			if _, ok := ResultContracts[res.Named.Value]; !ok {
				v.actorf(a, Error, res.Named.Pos, suggestOr(res.Named.Value, ContractNames(), "or write an inline JSON Schema mapping"), "unknown result contract %q", res.Named.Value)
			}
		case res.inline != nil:
			v.checkInlineSchema(a, res)
		}
	}
	if e := a.Execution; e != nil {
		switch {
		case a.IsHuman():
			v.actorf(a, Error, e.Pos, "remove execution", "a human actor takes no execution: a person has no workspace to run in")
		case !e.Workspace.Pos.IsSet():
			v.actorf(a, Error, e.Pos, "e.g. execution: { workspace: isolated }", "execution has no workspace")
		case e.Workspace.Value != "" && !contains(Workspaces, e.Workspace.Value):
			v.actorf(a, Error, e.Workspace.Pos, suggest(e.Workspace.Value, Workspaces), "unknown workspace %q", e.Workspace.Value)
		}
	}
	if a.Prelaunch.Pos.IsSet() && a.IsHuman() {
		v.actorf(a, Error, a.Prelaunch.Pos, "remove prelaunch", "a human actor takes no prelaunch command")
	}
}

// sanitizeName proposes a valid actor name for an invalid one.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	out := b.String()
	for out != "" && (out[0] < 'a' || out[0] > 'z') {
		out = out[1:]
	}
	if len(out) > MaxActorName {
		out = out[:MaxActorName]
	}
	if out == "" {
		return "worker"
	}
	return out
}

func (v *validator) capabilities(a *Actor) {
	seen := map[string]Pos{}
	var review, propose *Capability
	for i := range a.Capabilities {
		c := &a.Capabilities[i]
		raw := c.Raw.Value
		if first, dup := seen[raw]; dup {
			v.actorf(a, Warning, c.Raw.Pos, "remove it", "capability %q is listed twice, first at %s", raw, firstAt(first, c.Raw.Pos))
			continue
		}
		seen[raw] = c.Raw.Pos
		entry, ok := LookupCapability(c.Name)
		if !ok {
			v.unsure[a] = true
			v.actorf(a, Error, c.Raw.Pos, suggest(c.Name, capabilityNames), "unknown capability %q", c.Name)
			continue
		}
		if !entry.Grantable {
			v.actorf(a, Error, c.Raw.Pos, "remove it: no actor merges; a reviewed change lands through the code host's auto-merge", "%s is gate-only and never granted to an actor", c.Name)
			continue
		}
		if strings.Contains(raw, "@") {
			v.scope(a, c)
		}
		switch c.Name {
		case "code:review":
			review = c
		case "code:propose":
			propose = c
		}
	}
	if review != nil && propose != nil {
		later := review
		if propose.Raw.Pos.Line > review.Raw.Pos.Line || propose.Raw.Pos.Line == review.Raw.Pos.Line && propose.Raw.Pos.Col > review.Raw.Pos.Col {
			later = propose
		}
		v.actorf(a, Error, later.Raw.Pos, "split the role: one actor proposes, another reviews", "holds both code:review and code:propose, which would let it bless its own change across the merge boundary")
	}
}

// scope checks the @scope of a capability. The scope of an agent:* capability names an actor.
func (v *validator) scope(a *Actor, c *Capability) {
	switch {
	case c.Scope == "":
		v.actorf(a, Error, c.Raw.Pos, "name a scope after @, or remove the @", "capability %q has an empty scope", c.Raw.Value)
	case !scopeRe().MatchString(c.Scope):
		v.actorf(a, Error, c.Raw.Pos, "use letters, digits and . _ - / *", "capability %q has an invalid scope %q", c.Raw.Value, c.Scope)
	case strings.HasPrefix(c.Name, "agent:") && v.actors[c.Scope] == nil:
		v.actorf(a, Error, c.Raw.Pos, suggest(c.Scope, v.p.ActorNames()), "capability %q is scoped to %q, which is not an actor of this profile", c.Raw.Value, c.Scope)
	}
}

func (v *validator) triggers(a *Actor) {
	if !a.TriggersPos.IsSet() && !a.hollow && !a.typos["triggers"] {
		hint := "e.g. triggers: [{ dispatch: true }]"
		if !a.IsHuman() {
			hint = "e.g. triggers: [{ cron: \"0 9 * * 1-5\" }] or [{ dispatch: true }]"
		}
		v.actorf(a, Error, a.Name.Pos, hint, "has no triggers")
		return
	}
	for _, t := range a.Triggers {
		v.trigger(a, t)
	}
	v.gatingSources(a)
}

// gatingSources refuses a param bound to subject.actor or subject.actorRole on one trigger and to
// another source on another: a substrate records one source per param name (the gh-actions
// manifest its first), so the trusted side would take the other trigger's source for it and
// pass a forged value through where the workflow expects the substrate's own.
func (v *validator) gatingSources(a *Actor) {
	first := map[string]*Param{}
	for _, t := range a.Triggers {
		for i := range t.Params {
			prm := &t.Params[i]
			was, seen := first[prm.Name.Value]
			if !seen {
				first[prm.Name.Value] = prm
				continue
			}
			gating := func(s string) bool { return s == "subject.actor" || s == "subject.actorRole" }
			if was.Source.Value != prm.Source.Value && (gating(was.Source.Value) || gating(prm.Source.Value)) {
				v.actorf(a, Error, prm.Source.Pos, "give each source its own param name, e.g. "+prm.Name.Value+"_"+safeEnvName(envName(strings.TrimPrefix(prm.Source.Value, "subject."))),
					"param %s is bound to %s here and to %s on another trigger: a param from subject.actor or subject.actorRole must have that one source", prm.Name.Value, prm.Source.Value, was.Source.Value)
			}
		}
	}
}

func (v *validator) trigger(a *Actor, t *Trigger) {
	var forms []string
	if t.Cron.Pos.IsSet() {
		forms = append(forms, "cron")
	}
	if t.Event.Pos.IsSet() {
		forms = append(forms, "event")
	}
	if t.Dispatch.Pos.IsSet() {
		forms = append(forms, "dispatch")
	}
	switch len(forms) {
	case 0:
		if len(t.typos) > 0 {
			break // the misspelled form is reported already
		}
		v.actorf(a, Error, t.Pos, "e.g. { cron: \"0 9 * * *\" }, { event: issue_comment } or { dispatch: true }", "a trigger needs one of cron, event or dispatch")
	case 1:
		t.Kind = TriggerKind(forms[0])
	default:
		v.actorf(a, Error, t.Pos, "split it into one trigger per form", "a trigger is exactly one of cron, event or dispatch; this one has %s", strings.Join(forms, " and "))
	}
	if t.Cron.Pos.IsSet() && t.Cron.Value != "" {
		v.cron(a, t)
	}
	if t.Event.Value != "" && !eventNameRe().MatchString(t.Event.Value) {
		v.actorf(a, Error, t.Event.Pos, "an event name is a word such as issue_comment or pull_request_target", "event name %q is not valid", t.Event.Value)
	}
	if t.Config != nil && !t.Event.Pos.IsSet() {
		v.actorf(a, Error, pos(t.Config), "move config to an event trigger, or remove it", "config belongs only to event triggers")
	}
	if t.Dispatch.Pos.IsSet() && t.Dispatch.Value != "true" {
		v.actorf(a, Error, t.Dispatch.Pos, "write dispatch: true, or remove the trigger", "dispatch must be true")
	}
	if a.IsHuman() && t.Kind != "" && t.Kind != Dispatch {
		v.actorf(a, Error, t.Pos, "a person is engaged on demand: use { dispatch: true }", "a human actor's triggers must be dispatch, not %s", t.Kind)
	}
	v.params(a, t)
}

func (v *validator) params(a *Actor, t *Trigger) {
	for _, prm := range t.Params {
		name := prm.Name.Value
		switch {
		case !paramNameRe().MatchString(name):
			v.actorf(a, Error, prm.Name.Pos, "use an env name: uppercase letters, digits and _, e.g. "+safeEnvName(envName(name)), "param name %q is not valid", name)
		case IsReservedEnv(name):
			v.actorf(a, Error, prm.Name.Pos, "choose another name, e.g. "+safeEnvName(name), "param name %q is reserved: a tool of the box may read it from its environment, and a param's value may be untrusted text", name)
		}
		if src := prm.Source; src.Value != "" && !contains(sourceNames, src.Value) {
			v.actorf(a, Error, src.Pos, suggest(src.Value, sourceNames), "param %s: unknown source %q", name, src.Value)
		}
	}
}

func envName(s string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(s) {
		if c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "ITEM"
	}
	out := b.String()
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}

func (v *validator) review(a *Actor) {
	r := a.Review
	if !r.Pos.IsSet() || r.Value == "" {
		return
	}
	if !a.Holds("code:propose") && !v.unsure[a] {
		v.actorf(a, Error, r.Pos, "only a proposer has a reviewer: grant code:propose, or remove review", "has a reviewer but does not hold code:propose")
	}
	switch reviewer := v.actors[r.Value]; {
	case r.Value == a.Name.Value:
		v.actorf(a, Error, r.Pos, "name an independent reviewer", "cannot review its own changes")
	case reviewer == nil:
		v.actorf(a, Error, r.Pos, suggest(r.Value, v.p.ActorNames()), "reviewer %q is not an actor of this profile", r.Value)
	case !reviewer.Holds("code:review") && !v.unsure[reviewer]:
		v.actorf(a, Error, r.Pos, fmt.Sprintf("grant code:review to %q, or name another reviewer", r.Value), "reviewer %q does not hold code:review", r.Value)
	case !reviewer.IsHuman() && !reviewer.Contract().IsReview():
		// Its sessions end done with a result that names no verdict and no head: a proposal it
		// reviews is refused every time, and never merges.
		got := "no result (result: { schema: none })"
		if c := reviewer.Contract(); c != nil && c.Named.Value != "" {
			got = c.Named.Value
		} else if c != nil {
			got = "an inline result schema without verdict and headSha"
		}
		v.actorf(a, Warning, r.Pos, fmt.Sprintf("give %q result: { schema: %s }", r.Value, ReviewContract),
			"reviewer %q delivers %s, which names no verdict and no head: every proposal it reviews is refused", r.Value, got)
	}
}

// maxConcurrentRange is the hint of an out-of-range policy.maxConcurrent.
var maxConcurrentRange = fmt.Sprintf("give 1 to %d, or remove it for no limit", MaxConcurrentLimit)

func (v *validator) policy() {
	p := v.p.Policy
	if p.MaxConcurrent.Pos.IsSet() && (p.MaxConcurrent.Value < 1 || p.MaxConcurrent.Value > MaxConcurrentLimit) {
		v.r.errorf(p.MaxConcurrent.Pos, maxConcurrentRange, "policy.maxConcurrent %d is out of range", p.MaxConcurrent.Value)
	}
	states := map[string]TaskState{}
	labels := map[string]TaskState{}
	for i := range v.p.Policy.TaskStates {
		ts := &v.p.Policy.TaskStates[i]
		state := ts.Key.Value
		if canon, ok := StateAliases[state]; ok {
			state = canon
		}
		if !contains(stateNames, state) {
			v.r.errorf(ts.Key.Pos, suggest(state, stateNames), "policy.box.taskStates: unknown lifecycle state %q", ts.Key.Value)
			continue
		}
		ts.State = state
		if prev, dup := states[state]; dup {
			v.r.errorf(ts.Key.Pos, "keep one of them", "policy.box.taskStates: state %s is mapped twice, first as %q at %s", state, prev.Key.Value, firstAt(prev.Key.Pos, ts.Key.Pos))
			continue
		}
		states[state] = *ts
		if strings.TrimSpace(ts.Label.Value) == "" {
			continue // reported by the decoder
		}
		if prev, dup := labels[ts.Label.Value]; dup {
			v.r.errorf(ts.Label.Pos, "give each state its own name, or the orchestrator cannot tell them apart", "policy.box.taskStates: %q names both %s, at %s, and %s", ts.Label.Value, prev.State, firstAt(prev.Label.Pos, ts.Label.Pos), state)
			continue
		}
		labels[ts.Label.Value] = *ts
	}
}

func (v *validator) resources() {
	seen := map[string]Pos{}
	for _, r := range v.p.Resources {
		if r.Value == "" {
			continue // reported by the decoder
		}
		res := v.paths.check(r.Value)
		install := res.clean
		if res.problem == "does not exist" {
			// A template shipped in a package cannot hold a dotfile such as .gitignore, so it is
			// stored without the dot.
			if base := filepath.Base(res.clean); strings.HasPrefix(base, ".") && len(base) > 1 {
				alt := filepath.ToSlash(filepath.Join(filepath.Dir(res.clean), base[1:]))
				if altRes := v.paths.check(alt); altRes.problem == "" {
					res = altRes
				}
			}
		}
		if res.problem != "" {
			v.r.errorf(r.Pos, res.hint, "resource %q %s", r.Value, res.problem)
			continue
		}
		if !res.info.Mode().IsRegular() && !res.info.IsDir() {
			v.r.errorf(r.Pos, "a resource is a file or a directory of files", "resource %q is not a regular file", r.Value)
			continue
		}
		if first, dup := seen[res.clean]; dup {
			v.r.warnf(r.Pos, "remove it", "resource %q is listed twice, first at %s", r.Value, firstAt(first, r.Pos))
			continue
		}
		seen[res.clean] = r.Pos
		v.p.ResourceFiles = append(v.p.ResourceFiles, ResourceFile{Path: install, Source: res.clean, Dir: res.info.IsDir(), Pos: r.Pos})
	}
}

func (v *validator) documents() {
	d := v.p.Documents
	if d == nil || !d.RolesPos.IsSet() {
		return
	}
	hasVision := false
	for _, role := range d.Roles {
		if role.Name.Value == "vision" {
			hasVision = true
		}
		path := role.Path.Value
		if !role.Path.Pos.IsSet() || path == "" {
			continue
		}
		if strings.ContainsAny(path, "*?[]{}$~") {
			v.r.errorf(role.Path.Pos, "write the document's literal path, e.g. docs/VISION.md", "documents.roles.%s %q is not a literal path", role.Name.Value, path)
			continue
		}
		if _, problem, hint := relPath(path, "the repository root"); problem != "" {
			v.r.errorf(role.Path.Pos, hint, "documents.roles.%s %q %s", role.Name.Value, path, problem)
		}
	}
	if !hasVision {
		v.r.errorf(d.RolesPos, "add vision: with the path of your vision document, e.g. docs/VISION.md", "documents.roles has no vision")
	}
}

func (v *validator) cron(a *Actor, t *Trigger) {
	sched, err := v.crons[t.Cron.Value], error(nil)
	if sched == nil {
		sched, err = cron.Parse(t.Cron.Value)
	}
	if err == nil && v.crons[t.Cron.Value] == nil && sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		// Next searches five years, more than the four after which every date recurs.
		v.actorf(a, Error, t.Cron.Pos, "check the day of month against the month: February has no 30th, April no 31st", "cron %q never fires: no date matches its day of month and month", t.Cron.Value)
		return
	}
	if err == nil {
		// Fleets repeat a handful of schedules; parsed ones are immutable and shared.
		v.crons[t.Cron.Value] = sched
		t.Schedule = sched
		return
	}
	at := t.Cron.Pos
	var ce *cron.Error
	if !errors.As(err, &ce) {
		v.actorf(a, Error, at, "", "cron %q: %v", t.Cron.Value, err)
		return
	}
	if t.cronAt.IsSet() {
		at = Pos{t.cronAt.Line, t.cronAt.Col + ce.Offset}
	}
	v.actorf(a, Error, at, "", "cron %q: %s", t.Cron.Value, ce.Msg)
}

// actorf reports a problem of actor a, naming it first.
func (v *validator) actorf(a *Actor, sev Severity, p Pos, hint, format string, args ...any) {
	msg := fmt.Sprintf("actor %q: ", a.Name.Value) + fmt.Sprintf(format, args...)
	v.r.diags = append(v.r.diags, Diagnostic{File: v.r.file, Pos: p, Severity: sev, Message: msg, Hint: hint})
}
