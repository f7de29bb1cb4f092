package local

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/cron"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
)

// Where a local installation keeps what the runner reads, relative to the installation root.
const (
	dataDir = ".autonomy"
	// ManifestPath is the derived description of the installation: one per target, so that
	// both targets can be compiled into one directory.
	ManifestPath = localDir + "/manifest.json"
	// LifecyclePath maps the standard's task states to the tracker's names.
	LifecyclePath = dataDir + "/lifecycle.json"
	localDir      = dataDir + "/local"
	// SchedulePath lists every cron trigger, exactly as declared.
	SchedulePath = localDir + "/schedule.json"
	// RunnerPath holds the fleet-wide settings the runner enforces.
	RunnerPath = localDir + "/runner.json"
	// StateDir holds the runner's state: the database, logs, results, the attention list.
	StateDir = dataDir + "/state"
	// WorktreeDir holds the git worktrees of isolated sessions.
	WorktreeDir = dataDir + "/worktrees"
	// HumanRequiredPath carries policy.box.risk.human_required_paths for the approval gate.
	HumanRequiredPath = dataDir + "/human-required-paths.json"
)

// ActorPath is where an actor's launcher config is installed.
func ActorPath(actor string) string { return localDir + "/actors/" + actor + ".json" }

// ActorConfig is an actor's launcher config: everything the runner needs to start it.
type ActorConfig struct {
	Actor string `json:"actor"`
	// Kind is "agent" or "human".
	Kind string `json:"kind"`
	// Behavior is the installed behavior file: a skill's SKILL.md, a script, or for a person the
	// task spec they are handed.
	Behavior string `json:"behavior"`
	// BehaviorSHA256 is the sha256 of Behavior's installed bytes, lowercase hex: a session
	// runs, or hands a person, only the behavior autonomy installed (verifyBehavior). A config
	// compiled before it was recorded is refused until compiled again.
	BehaviorSHA256 string `json:"behaviorSha256,omitempty"`
	// Skill is true when Behavior is a skill run by the box's agent command.
	Skill bool `json:"skill"`
	// Workflow is true when Behavior is a workflow playbook (seed 003) that the runner runs
	// itself, step by step, instead of handing it to an agent.
	Workflow bool `json:"workflow,omitempty"`
	// Steps is true when the workflow is a step playbook (seed 002): the runner runs it with
	// autonomy playbook run, each step an invocation of Command (the box's agent).
	Steps bool `json:"steps,omitempty"`
	// Secrets are the environment variables a workflow may read as $secrets.NAME
	// (policy.box.local.secrets).
	Secrets []string `json:"secrets,omitempty"`
	// PassEnv are the runner's environment variables its sessions receive besides the
	// allowlist (policy.box.local.env; sessionenv.go).
	PassEnv []string `json:"passEnv,omitempty"`
	// ToolsMax overrides tools.DefaultMax per tool for its sessions (policy.box.local.tools.max).
	ToolsMax map[string]int `json:"toolsMax,omitempty"`
	// Model is what the model proxy beside a preset's session enforces (policy.box.local.model);
	// nil for the defaults.
	Model *ModelPolicy `json:"model,omitempty"`
	// Egress is what a preset's session reaches besides the model proxy (policy.box.local.network
	// and egress); nil for the default (egressbox.go).
	Egress *EgressPolicy `json:"egress,omitempty"`
	// MCP are the MCP servers a workflow's mcp steps may call (policy.box.mcp.servers).
	MCP map[string]resolved.MCPServer `json:"mcp,omitempty"`
	// CLI is policy.box.cli: the programs a workflow's cli steps may run (none: any).
	CLI *resolved.CLIPolicy `json:"cli,omitempty"`
	// Web is policy.box.web: the hosts a workflow's web steps may fetch from (none: no web step).
	Web *resolved.WebPolicy `json:"web,omitempty"`
	// Command is how an agent is started; nil for a person and a workflow.
	Command *Command `json:"command,omitempty"`
	// Capabilities as written, scope included.
	Capabilities []string `json:"capabilities"`
	// Params is every param the actor's triggers forward, each name once, in declaration order.
	Params []Param `json:"params"`
	// Env is the fixed part of the env contract; the runner adds the params, AUTONOMY_SESSION,
	// AUTONOMY_FORWARD, AUTONOMY_DIR and AUTONOMY_RESULT at launch.
	Env map[string]string `json:"env"`
	// TimeoutMinutes bounds a session; 0 for none.
	TimeoutMinutes int `json:"timeoutMinutes,omitempty"`
	// Workspace is "shared" (the installation root) or "isolated" (a git worktree per session).
	Workspace string `json:"workspace"`
	// Verification is the ## Verification method of an agent's capsule playbook behavior: what
	// its session must show to be done (capsule.go).
	Verification string `json:"verification,omitempty"`
	// Lifecycle is set when the agent's capsule playbook behavior is archived (no new run: a
	// launch is refused, its cron triggers are not scheduled) or superseded (Behavior is the
	// successor a new run follows, and each session's log says so).
	Lifecycle *resolved.Lifecycle `json:"lifecycle,omitempty"`
	// Reviewer is the actor that reviews this proposer's changes.
	Reviewer string `json:"reviewer,omitempty"`
	// Result is the installed JSON Schema an exit-0 session's result file must satisfy.
	Result string `json:"result,omitempty"`
	// Prelaunch is run with sh -c in the session's workspace before the actor starts.
	Prelaunch string `json:"prelaunch,omitempty"`
	// Triggers are the actor's triggers, in declaration order.
	Triggers []Trigger `json:"triggers"`
}

// Command is the argv that starts an agent, and what it reads on stdin.
type Command struct {
	// Argv's first word is looked up on PATH unless it holds a slash; a word starting with
	// ".autonomy/" is a path inside the installation.
	Argv []string `json:"argv"`
	// Stdin is an installed file fed to the process (the skill), or "" for none.
	Stdin string `json:"stdin,omitempty"`
	// Box is true when Argv is the box's agent command, which AUTONOMY_LOCAL_AGENT overrides.
	Box bool `json:"box"`
	// Script is set for a script behavior (Argv is then just the script): how it runs, by its #!
	// line or its extension; the runner picks the interpreter installed on the machine at launch.
	Script *ir.ScriptRun `json:"script,omitempty"`
	// Preset names the agent preset Argv comes from ("" for an explicit command); Argv then holds
	// its placeholders ({result}, {schema}, {schema-json}, {git-dir}), filled at launch.
	Preset string `json:"preset,omitempty"`
	// Package is the preset's pinned npm package spec, for the preflight's install hint.
	Package string `json:"package,omitempty"`
	// Output is how the preset's final message and structured result leave it (agent.Output).
	Output string `json:"output,omitempty"`
}

// Param forwards one trigger-param source under an opaque env name.
type Param struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// Trigger is one trigger of an actor.
type Trigger struct {
	Kind  string `json:"kind"`
	Cron  string `json:"cron,omitempty"`
	Event string `json:"event,omitempty"`
	// Types are an event trigger's activity types (config.types; empty: its default ones);
	// PlainComments is config.plain_comments of an issue_comment trigger (events.go).
	Types         []string `json:"types,omitempty"`
	PlainComments bool     `json:"plainComments,omitempty"`
	Params        []string `json:"params"`
}

// Schedule is every cron trigger of the fleet.
type Schedule struct {
	// Timezone is the IANA zone the expressions are read in.
	Timezone string  `json:"timezone"`
	Entries  []Entry `json:"entries"`
}

// Entry is one cron trigger.
type Entry struct {
	// Key names the trigger for the executor's state: actor#index.
	Key   string `json:"key"`
	Actor string `json:"actor"`
	// Trigger is the index of the trigger among the actor's.
	Trigger int    `json:"trigger"`
	Cron    string `json:"cron"`
	// Params are the params the trigger forwards.
	Params []Param `json:"params"`
}

// RunnerConfig is the fleet-wide behavior of the runner.
type RunnerConfig struct {
	// MaxConcurrent caps running agent sessions across the fleet; 0 for no cap.
	MaxConcurrent int `json:"maxConcurrent"`
	// GraceSeconds is how long a session has between TERM and KILL.
	GraceSeconds int `json:"graceSeconds"`
	// LogMaxBytes is how many bytes of its most recent output a session's log keeps; 0 (an
	// installation compiled before it existed) for DefaultLogMaxBytes.
	LogMaxBytes int64 `json:"logMaxBytes"`
	// Overlap lets the schedule start an actor that already has a scheduled session running.
	Overlap bool `json:"overlap"`
	// InstallPaused installs the fleet paused (policy.box.local.installPaused): the first runner
	// to open the store records the fleet's pause, once (throttle.go).
	InstallPaused bool `json:"installPaused,omitempty"`
	// TargetBranch is the branch the code flow merges approved proposals into
	// (policy.box.local.targetBranch); "" for the branch the installation root has checked out.
	TargetBranch string `json:"targetBranch,omitempty"`
	// CodeHost is the profile's codeHost when it is not local-git ("github"): the code flow
	// then merges nothing locally (codeflow.go).
	CodeHost string `json:"codeHost,omitempty"`
	// Actors lists the installed actors, in the profile's order.
	Actors []string `json:"actors"`
	// Events is how event triggers fire (nil: no actor declares one); Asks how open asks to
	// people are escalated (nil: no person to ask). See events_box.go.
	Events *EventsConfig `json:"events,omitempty"`
	Asks   *AsksConfig   `json:"asks,omitempty"`
}

// Lifecycle maps each lifecycle state to the tracker's name for it.
type Lifecycle struct {
	States []StateName `json:"states"`
}

// StateName is one lifecycle state and the tracker's name for it.
type StateName struct {
	State string `json:"state"`
	Name  string `json:"name"`
	// Mapped is false when the profile did not map the state and the standard's name is used.
	Mapped bool `json:"mapped"`
}

// Install is a local installation as the runner reads it.
type Install struct {
	// Dir is the installation root, absolute.
	Dir string
	// graceOverride is the runner's Options.Grace (0: the installation's graceSeconds).
	graceOverride time.Duration
	Runner        RunnerConfig
	Schedule      Schedule
	// Location is Schedule.Timezone loaded.
	Location *time.Location
	// Cron holds each schedule entry's parsed expression, by Key.
	Cron map[string]*cron.Schedule

	// stateAt is where this process reaches StateDir, when not under Dir (stateAlias).
	stateAt string

	mu     sync.Mutex
	actors map[string]readConfig
}

// readConfig is an actor's config as read, and the bytes it was decoded from.
type readConfig struct {
	cfg *ActorConfig
	raw []byte
}

// ErrNotInstalled is returned when a directory holds no local installation.
var ErrNotInstalled = errors.New("no local installation")

// notInstalledFix says how to reach an installation from dir (abs, absolute), which holds none:
// compile one there, or, when dir holds a profile (an ir.yml: a natural mistake, the profile's
// folder is not where it was compiled to), name the folder it was compiled into.
func notInstalledFix(abs, dir string) string {
	if _, err := os.Stat(filepath.Join(abs, "ir.yml")); err == nil {
		if _, err := os.Stat(filepath.Join(abs, "..", RunnerPath)); err == nil {
			// init's layout: the profile in a folder of the installation's root.
			return fmt.Sprintf("%s holds a profile, not an installation; the folder above it is one: --dir %s", dir, shellWord(filepath.Join(dir, "..")))
		}
		return fmt.Sprintf("%s holds a profile, not an installation: name the folder it was compiled into with --dir, or compile it: autonomy compile %s --target local --dir FOLDER", dir, shellWord(dir))
	}
	if root := installAbove(abs); root != "" {
		// A folder of an installed repository (docs/, .autonomy/): the installation is above.
		rel, err := filepath.Rel(abs, root)
		if err != nil {
			rel = root
		}
		return fmt.Sprintf("%s is inside the installation %s: run from there, or pass --dir %s", dir, root, shellWord(filepath.Join(dir, rel)))
	}
	profile := "PROFILE"
	if _, err := os.Stat(filepath.Join(abs, "autonomy", "ir.yml")); err == nil {
		profile = shellWord(filepath.Join(dir, "autonomy")) // where init writes it
	}
	return "compile one: autonomy compile " + profile + " --target local --dir " + shellWord(dir)
}

// installAbove is the nearest folder above abs that holds an installation, or "".
func installAbove(abs string) string {
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, RunnerPath)); err == nil && fi.Mode().IsRegular() {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Open reads the installation in dir.
func Open(dir string) (*Install, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	in := &Install{Dir: abs, Cron: map[string]*cron.Schedule{}}
	if err := readJSON(abs, RunnerPath, &in.Runner); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w (%s)", dir, ErrNotInstalled, notInstalledFix(abs, dir))
		}
		return nil, err
	}
	if err := readJSON(abs, SchedulePath, &in.Schedule); err != nil {
		return nil, err
	}
	if in.Location, err = time.LoadLocation(in.Schedule.Timezone); err != nil {
		return nil, fmt.Errorf("%s: timezone %q: %v", filepath.Join(dir, SchedulePath), in.Schedule.Timezone, err)
	}
	for _, e := range in.Schedule.Entries {
		s, err := cron.Parse(e.Cron)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: cron %q: %v (compile again)", filepath.Join(dir, SchedulePath), e.Key, e.Cron, err)
		}
		in.Cron[e.Key] = s
	}
	return in, nil
}

// Actor reads an actor's launcher config, once per Install: a config is read-only to callers.
func (in *Install) Actor(name string) (*ActorConfig, error) {
	if !validActorName(name) {
		return nil, fmt.Errorf("%q is not an actor name (%s)", name, suggestActor(name, in.Runner.Actors))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.actors[name]; ok {
		return c.cfg, nil
	}
	return in.readActor(name)
}

// keepActors keeps the actor configs prev read whose files still hold the very bytes they were
// decoded from: what runner serve, which opens the installation again at each tick, would
// otherwise decode again, every config at every tick. The bytes are compared, not the files'
// times: an agent working in the installation root can write a config and put the installed
// bytes back with the times they had, and what serve decides by (capabilities, reviewers) must
// then be the installed config again.
func (in *Install) keepActors(prev *Install) {
	if prev == nil || prev == in || prev.Dir != in.Dir {
		return
	}
	prev.mu.Lock()
	kept := make(map[string]readConfig, len(prev.actors))
	for name, c := range prev.actors {
		kept[name] = c
	}
	prev.mu.Unlock()
	in.mu.Lock()
	defer in.mu.Unlock()
	for name, c := range kept {
		if _, ok := in.actors[name]; ok {
			continue
		}
		raw, err := readConfigFile(in.Dir, ActorPath(name))
		if err != nil || !bytes.Equal(raw, c.raw) {
			continue
		}
		if in.actors == nil {
			in.actors = map[string]readConfig{}
		}
		in.actors[name] = c
	}
}

// ReloadActor is Actor read from disk again, whatever was read before: what a supervisor starts
// a session with, since an agent working in the installation root may have changed the file
// (put back when its session ended, rootlock.go) while an earlier read kept its copy.
func (in *Install) ReloadActor(name string) (*ActorConfig, error) {
	if !validActorName(name) {
		return nil, fmt.Errorf("%q is not an actor name (%s)", name, suggestActor(name, in.Runner.Actors))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.readActor(name)
}

// forgetActors drops the actor configs read so far: the next Actor reads them again.
func (in *Install) forgetActors() {
	in.mu.Lock()
	in.actors = nil
	in.mu.Unlock()
}

// readActor reads an actor's config and caches it; in.mu is held.
func (in *Install) readActor(name string) (*ActorConfig, error) {
	var c ActorConfig
	raw, err := readJSONFile(in.Dir, ActorPath(name), &c)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no actor %q in %s (%s)", name, in.Dir, suggestActor(name, in.Runner.Actors))
		}
		return nil, err
	}
	if in.actors == nil {
		in.actors = map[string]readConfig{}
	}
	in.actors[name] = readConfig{&c, raw}
	return &c, nil
}

// Path resolves an installation-relative slash path.
func (in *Install) Path(p string) string {
	if rest, ok := strings.CutPrefix(p, StateDir); ok && in.stateAt != "" && (rest == "" || rest[0] == '/') {
		return filepath.Join(in.stateAt, filepath.FromSlash(rest))
	}
	return filepath.Join(in.Dir, filepath.FromSlash(p))
}

// stateAlias makes this Install reach its state folder at dir (StateEnv): refused unless dir
// holds this installation's database, the very file, not a copy.
func (in *Install) stateAlias(dir string) error {
	own, err := os.Stat(DBPath(in.Dir))
	if err == nil {
		var there os.FileInfo
		if there, err = os.Stat(filepath.Join(dir, "state.db")); err == nil && !os.SameFile(own, there) {
			err = errors.New("it holds another database")
		}
	}
	if err != nil || !filepath.IsAbs(dir) {
		return fmt.Errorf("%s=%s is not where this process reaches the state folder of %s (%v): unset it", StateEnv, dir, in.Dir, err)
	}
	in.stateAt = dir
	return nil
}

// validActorName keeps a name from reaching outside the actors folder.
func validActorName(s string) bool {
	if s == "" || len(s) > 63 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// suggestActor is the hint for an actor name the installation does not have: the nearest
// actor's name when name is a plausible typo of it, and every actor.
func suggestActor(name string, actors []string) string {
	if len(actors) == 0 {
		return "the installation has no actors"
	}
	all := "actors: " + strings.Join(actors, ", ")
	if near := ir.Nearest(name, actors); near != "" {
		return fmt.Sprintf("did you mean %q? %s", near, all)
	}
	return all
}

// readJSON decodes an installed JSON file; its "//" header member is an unknown field, ignored.
func readJSON(dir, rel string, v any) error {
	_, err := readJSONFile(dir, rel, v)
	return err
}

// readJSONFile is readJSON, and returns the bytes it decoded.
func readJSONFile(dir, rel string, v any) ([]byte, error) {
	data, err := readConfigFile(dir, rel)
	if err != nil {
		return nil, err
	}
	if err := verifyInstalled(dir, rel, data); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("%s: %v (compile again)", filepath.Join(dir, filepath.FromSlash(rel)), err)
	}
	return data, nil
}

// readConfigFile reads an installed file.
func readConfigFile(dir, rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
}

// editedFix is what a refusal of an installed file that changed since autonomy generated it
// tells the operator.
const editedFix = "the runner acts only on what autonomy compiled: move the change into the profile and compile again (autonomy check lists every changed file; autonomy compile --force puts the generated files back)"

// verifyInstalled refuses a generated JSON file (a launcher config, the schedule, the runner
// config, the manifest) whose DO NOT EDIT header is gone or no longer matches its body: a
// hand edit, or an agent's, that the runner would otherwise act on, where check and compile
// would report it.
func verifyInstalled(dir, rel string, data []byte) error {
	h, ok := substrates.ReadHeader(data)
	if ok && h.Intact && h.Style == substrates.JSONHeader {
		return nil
	}
	what := "has no DO NOT EDIT header"
	if ok {
		what = "was edited after autonomy generated it (its body no longer matches the sha256 in its DO NOT EDIT header)"
	}
	return fmt.Errorf("%s %s: %s%w", filepath.Join(dir, filepath.FromSlash(rel)), what, editedFix, errEdited)
}

// errEdited marks the refusal of an installed file edited since autonomy generated it; its text
// is empty, the refusal's own says it all.
var errEdited = errors.New("")

// verified is cfg once its behavior is the one installed (verifyBehavior), for a caller that
// has just read it: in.verified(in.Actor(name)).
func (in *Install) verified(cfg *ActorConfig, err error) (*ActorConfig, error) {
	if err == nil {
		err = in.verifyBehavior(cfg)
	}
	return cfg, err
}

// verifyBehavior refuses an actor whose installed behavior is not the one its config records
// (BehaviorSHA256): what a session runs, or a person is handed, is what autonomy installed.
func (in *Install) verifyBehavior(cfg *ActorConfig) error {
	if cfg.Behavior == "" {
		return nil
	}
	if cfg.BehaviorSHA256 == "" {
		// Compiled by an autonomy that did not record it: nothing vouches for the behavior.
		return fmt.Errorf("actor %q: its launcher config records no sha256 of its behavior %s (it was compiled by an earlier autonomy): compile the profile again with this one%w",
			cfg.Actor, filepath.Join(in.Dir, filepath.FromSlash(cfg.Behavior)), errEdited)
	}
	root, err := os.OpenRoot(in.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	path := filepath.Join(in.Dir, filepath.FromSlash(cfg.Behavior))
	// Never blocked by a FIFO put in its place (a tick checks inside its write transaction).
	f, err := root.OpenFile(filepath.FromSlash(cfg.Behavior), os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return fmt.Errorf("actor %q: its behavior %s: %v (compile again)", cfg.Actor, path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("actor %q: its behavior %s is not the file autonomy installed (not a regular file): %s%w", cfg.Actor, path, editedFix, errEdited)
	} else if fi.Size() > substrates.MaxCopy {
		// Larger than any file the compile installs: refused unread (a tick checks inside its
		// write transaction; a sparse file of gigabytes held it for seconds).
		return fmt.Errorf("actor %q: its behavior %s is not the file autonomy installed (%d bytes, over what a compile installs): %s%w", cfg.Actor, path, fi.Size(), editedFix, errEdited)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, substrates.MaxCopy+1)); err != nil {
		return fmt.Errorf("actor %q: its behavior %s: %v", cfg.Actor, path, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != cfg.BehaviorSHA256 {
		return fmt.Errorf("actor %q: its behavior %s was edited after autonomy installed it (it is not the sha256 its launcher config records): %s%w",
			cfg.Actor, path, editedFix, errEdited)
	}
	return nil
}
