package kubernetes

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
)

// Where compile writes, relative to the output directory.
const (
	// Dir holds the kustomization: `kubectl apply -k kubernetes/` installs the fleet.
	Dir = "kubernetes"
	// dataDir is where the installation's files sit in the session's container, under
	// InstallDir: behaviors, result schemas, the policy (resources keep their own paths).
	dataDir = "fleet"
	// maxInstallBytes is what ConfigMapInstall may hold: the API refuses an object over 1 MiB.
	maxInstallBytes = 1000 * 1024
)

// Substrate is the Kubernetes substrate.
type Substrate struct{}

// Name returns "kubernetes".
func (Substrate) Name() string { return Name }

// Aliases returns none: the target has no deprecated spelling.
func (Substrate) Aliases() []string { return nil }

// ShortNames returns "k8s", a plain other name of the target (no warning).
func (Substrate) ShortNames() []string { return []string{Alias} }

// Support returns the support declaration.
func (Substrate) Support() []substrates.Support { return support }

// compiler holds one compile.
type compiler struct {
	r      *resolved.Profile
	p      *ir.Profile
	box    Box
	agents []string
	// install are the files of ConfigMapInstall, by path; producers who made each.
	install   map[string]substrates.File
	producers map[string]string
	// bySource are the installed files of each behavior (by its source in the profile); shared
	// are the files no behavior or result schema installed: the policy, resources, overlays.
	bySource map[string][]string
	shared   []string
	errors   ir.Diagnostics
}

// Compile realizes the profile as a kustomization of one namespace.
func (Substrate) Compile(r *resolved.Profile) (substrates.Output, error) {
	p := r.Profile
	b, diags := ReadBox(p)
	c := &compiler{r: r, p: p, box: b, install: map[string]substrates.File{}, producers: map[string]string{}, bySource: map[string][]string{}}
	var warnings ir.Diagnostics
	for _, d := range diags {
		if d.Severity == ir.Error {
			c.errors = append(c.errors, d)
		} else {
			warnings = append(warnings, d)
		}
	}
	if b.Image == DefaultImage && len(p.Actors) > len(c.humans()) {
		// No registry serves it: every session's pod would wait on its image, unpulled.
		pos := substrates.TargetPos(p, Name, Alias)
		warnings = append(warnings, ir.Diagnostic{File: p.File, Pos: pos, Severity: ir.Warning,
			Message: "every session runs the image " + DefaultImage + ", a placeholder that no registry serves: its pods would wait for it, unpulled",
			Hint:    "build the image and push it (docs/kubernetes.md, The image), then set policy.box.kubernetes.image: REGISTRY/autonomy-agent:TAG"})
	}
	objects := map[string]string{} // ObjectName: the actor whose it is
	for _, a := range p.Actors {
		if !a.IsHuman() {
			c.agents = append(c.agents, a.Name.Value)
		}
		// Two actors of one object name would share a ServiceAccount, a Role, a PodTemplate:
		// a launch scoped to one would reach the other's.
		name := ObjectName(a.Name.Value)
		if strings.HasPrefix(name, "autonomy-") {
			c.errors = append(c.errors, ir.Diagnostic{File: p.File, Pos: a.Name.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q has a Kubernetes object name of the fleet's own (%s: autonomy-model-proxy, autonomy-fleet, … are the fleet's)", a.Name.Value, name),
				Hint:    "rename it: an actor's name may not start with autonomy-"})
			continue
		}
		if first, dup := objects[name]; dup {
			c.errors = append(c.errors, ir.Diagnostic{File: p.File, Pos: a.Name.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q has the Kubernetes object name of actor %q (%s)", a.Name.Value, first, name),
				Hint:    "rename one of them: an actor's objects are named after it, with _ written - and a hash added when that changes the name"})
			continue
		}
		objects[name] = a.Name.Value
	}
	c.errors = append(c.errors, substrates.CopyProfile(r, Name, dataDir, c.add)...)
	policy := substrates.PolicyFile(p)
	policy.Path = dataDir + "/policy.json"
	c.add(policy, "the policy", p.Policy.Pos)
	fleet := c.fleetConfig()
	if c.errors.HasErrors() {
		return substrates.Output{}, c.errors.Sort()
	}
	files, err := c.manifests(fleet)
	if err != nil {
		return substrates.Output{}, err
	}
	warnings = append(warnings, substrates.SupportWarnings(Substrate{}, p, warnings)...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return substrates.Output{Target: Name, Files: files, Warnings: warnings.Sort()}, nil
}

// add records a file of the installation, refusing a second producer of one path.
func (c *compiler) add(f substrates.File, producer string, pos ir.Pos) {
	if first, dup := c.producers[f.Path]; dup {
		if first != producer {
			c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: pos, Severity: ir.Error,
				Message: fmt.Sprintf("%s and %s both install %s", first, producer, f.Path), Hint: "rename one of them"})
		}
		return
	}
	c.producers[f.Path] = producer
	c.install[f.Path] = f
	if src, ok := strings.CutPrefix(producer, behaviorProducer); ok {
		c.bySource[src] = append(c.bySource[src], f.Path)
	} else if !strings.HasPrefix(f.Path, resultsDir+"/") {
		c.shared = append(c.shared, f.Path)
	}
}

// behaviorProducer starts what substrates.CopyProfile says produced an actor's behavior file.
const behaviorProducer = "the behavior "

// resultsDir holds the installed result schemas.
const resultsDir = dataDir + "/results"

// FleetConfig is ConfigMapFleet's FleetConfigKey: what the runner knows of the fleet without
// the profile.
type FleetConfig struct {
	Namespace     string        `json:"namespace"`
	MaxConcurrent int           `json:"maxConcurrent"`
	TimeZone      string        `json:"timeZone"`
	Actors        []ActorConfig `json:"actors"`
}

// ActorConfig is one actor of FleetConfig. Paths are relative to InstallDir.
type ActorConfig struct {
	Actor string `json:"actor"`
	// Object is ObjectName(Actor): its ServiceAccount, Role, RoleBinding and PodTemplate.
	Object   string `json:"object"`
	Kind     string `json:"kind"`
	Behavior string `json:"behavior"`
	// Script is set for a script behavior: how the session entry point runs it (session.go).
	Script         *ir.ScriptRun `json:"script,omitempty"`
	Capabilities   []string      `json:"capabilities"`
	Triggers       []Trigger     `json:"triggers"`
	TimeoutSeconds int           `json:"timeoutSeconds,omitempty"`
	Result         string        `json:"result,omitempty"`
	Reviewer       string        `json:"reviewer,omitempty"`
	Prelaunch      string        `json:"prelaunch,omitempty"`
	Workspace      string        `json:"workspace"`
	// Agent is set for a skill: the agent CLI that runs it in the session's pod (session_agent.go).
	Agent *AgentRun `json:"agent,omitempty"`
}

// AgentRun is the agent CLI a skill's session runs: a preset of internal/agent at its pinned
// version (the image holds it), and the model it asks for ("" for the preset's default).
type AgentRun struct {
	Preset  string `json:"preset"`
	Version string `json:"version"`
	Model   string `json:"model,omitempty"`
}

// Trigger is one trigger of an actor: its kind, its cron (and CronJob) or event, and the params
// it forwards, each from its source.
type Trigger struct {
	Kind    string  `json:"kind"`
	Cron    string  `json:"cron,omitempty"`
	CronJob string  `json:"cronJob,omitempty"`
	Event   string  `json:"event,omitempty"`
	Params  []Param `json:"params"`
}

// Param is one forwarded param: the env name and its source (ir.Sources).
type Param struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// cronJobName names the CronJob of an actor's trigger i: at most 52 characters.
func cronJobName(actor string, i int) string { return fmt.Sprintf("%s-%d", ObjectName(actor), i) }

// fleetConfig builds the fleet config, installing each actor's result schema.
func (c *compiler) fleetConfig() FleetConfig {
	fc := FleetConfig{Namespace: c.box.Namespace, MaxConcurrent: c.p.Policy.MaxConcurrent.Value, TimeZone: c.box.TimeZone, Actors: []ActorConfig{}}
	for _, a := range c.p.Actors {
		ac := ActorConfig{Actor: a.Name.Value, Object: ObjectName(a.Name.Value), Kind: "agent", Behavior: dataDir + "/" + a.BehaviorFile,
			Capabilities: []string{}, Triggers: []Trigger{}, TimeoutSeconds: a.Timeout.Value * 60, Reviewer: a.Review.Value, Prelaunch: a.Prelaunch.Value, Workspace: "isolated", Script: a.Script}
		if a.IsHuman() {
			ac.Kind = "human"
		}
		for _, cp := range a.Capabilities {
			ac.Capabilities = append(ac.Capabilities, cp.Raw.Value)
		}
		for i, t := range a.Triggers {
			tr := Trigger{Kind: string(t.Kind), Event: t.Event.Value, Params: []Param{}}
			if t.Kind == ir.Cron {
				tr.Cron, tr.CronJob = t.Cron.Value, cronJobName(a.Name.Value, i)
			}
			for _, pm := range t.Params {
				tr.Params = append(tr.Params, Param{Name: pm.Name.Value, Source: pm.Source.Value})
			}
			ac.Triggers = append(ac.Triggers, tr)
		}
		if ct := a.Contract(); ct != nil {
			ac.Result = c.resultSchema(a, ct)
		}
		if a.Skill && !a.IsHuman() {
			ac.Agent = &AgentRun{Preset: c.box.Agent.Name, Version: c.box.Agent.Version, Model: c.box.Model}
		}
		fc.Actors = append(fc.Actors, ac)
	}
	return fc
}

// resultSchema installs the actor's result contract ct (a.Contract(): the one it declares, or
// the default a skill has) and returns its path.
func (c *compiler) resultSchema(a *ir.Actor, ct *ir.Result) string {
	path := c.resultPath(a)
	if name := ct.Named.Value; name != "" {
		c.add(substrates.File{Path: path, Data: []byte(ir.ResultContracts[name] + "\n"), Mode: 0o644}, "the result contract "+name, ct.Pos)
		return path
	}
	data, err := json.MarshalIndent(ct.Inline, "", "  ")
	if err != nil {
		c.errors = append(c.errors, ir.Diagnostic{File: c.p.File, Pos: ct.Pos, Severity: ir.Error, Message: "the result schema cannot be written: " + err.Error()})
		return path
	}
	c.add(substrates.File{Path: path, Data: append(data, '\n'), Mode: 0o644}, fmt.Sprintf("the result schema of actor %q", a.Name.Value), ct.Pos)
	return path
}

// installBytes is the size of the installation's files.
func (c *compiler) installBytes() int {
	n := 0
	for p, f := range c.install {
		n += len(p) + len(f.Data)
	}
	return n
}

// installPaths are the installation's paths, sorted.
func (c *compiler) installPaths() []string {
	out := make([]string, 0, len(c.install))
	for p := range c.install {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// capabilitiesEnv is AUTONOMY_CAPABILITIES: the capabilities as written, space-separated.
func capabilitiesEnv(a *ir.Actor) string {
	caps := make([]string, len(a.Capabilities))
	for i, cp := range a.Capabilities {
		caps[i] = cp.Raw.Value
	}
	return strings.Join(caps, " ")
}
