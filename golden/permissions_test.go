package golden

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// The standard's github realization of each capability (the Capabilities section), written out
// here rather than taken from the compiler, so the compiler is checked against the spec.
var standard = map[string]map[string]string{
	"code:propose":   {"contents": "write", "pull-requests": "write", "actions": "write"},
	"code:review":    {"statuses": "write"},
	"tasks:author":   {"issues": "write"},
	"tasks:converse": {"issues": "write"},
	"agent:launch":   {"actions": "write"},
	"agent:cancel":   {"actions": "write"},
	"agent:list":     {"actions": "read"},
}

// effect is what each trusted job may hold (docs/gh-actions.md): it runs autonomy, never the
// model. The propose job comments on the work item when it refuses a change (issues: write).
//
// A step playbook that asks a person has two more (docs/gh-actions.md, "Step playbooks"): ask posts
// the question on the work item (issues: write); resume, before the agent job, downloads the
// paused run of another run and deletes it once applied (actions: write) and records the resume
// on the item (issues: write).
//
// The apply job's depend on its actor's capabilities (applyMay): it writes what the standard maps
// the capabilities of the effects it applies to (applied), and reads the installation.
var effect = map[string]map[string]string{
	"propose": {"contents": "write", "pull-requests": "write", "actions": "write", "issues": "write"},
	"review":  {"contents": "read", "pull-requests": "write", "statuses": "write"},
	"ask":     {"contents": "read", "issues": "write"},
	"resume":  {"actions": "write", "contents": "read", "issues": "write"},
}

// effectNeeds is the job each trusted job follows ("" for none: resume comes first), and
// effectCapability the capability its actor must hold (either of them).
var (
	effectNeeds      = map[string]string{"propose": "agent", "review": "agent", "ask": "agent", "resume": "", "apply": "agent"}
	effectCapability = map[string][]string{"propose": {"code:propose"}, "review": {"code:review"}, "ask": {"tasks:converse", "tasks:author"}, "resume": {"tasks:converse", "tasks:author"},
		"apply": applied}
)

// applied are the capabilities whose effects the apply job realizes (docs/gh-actions.md).
var applied = []string{"tasks:converse", "tasks:author", "agent:launch", "agent:cancel", "agent:update"}

// baseline is what every job may read.
var baseline = map[string]string{"contents": "read", "issues": "read", "pull-requests": "read"}

func level(access string) int {
	switch access {
	case "read":
		return 1
	case "write":
		return 2
	}
	return 0
}

// TestPermissionInvariants checks every golden gh-actions workflow: the workflow holds no
// permission, no job exceeds its actor's capability mapping, no job holds both
// contents: write and statuses: write (the merge boundary), no job that runs the model holds
// contents, statuses or pull-requests: write, and those powers sit in trusted jobs that run
// autonomy, never the model. A job gated by an environment proves its approval first and holds
// actions: read for it.
func TestPermissionInvariants(t *testing.T) {
	manifests, _ := filepath.Glob("*/gh-actions/" + ghactions.ManifestPath)
	if len(manifests) == 0 {
		t.Fatal("no golden gh-actions manifest found")
	}
	jobs := 0
	for _, mpath := range manifests {
		root := strings.TrimSuffix(mpath, "/"+ghactions.ManifestPath) // the installation
		data, err := os.ReadFile(mpath)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Actors []struct {
				Name         string   `json:"name"`
				Workflow     string   `json:"workflow"`
				Capabilities []string `json:"capabilities"`
			} `json:"actors"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", mpath, err)
		}
		for _, a := range m.Actors {
			// The job that runs the model reads only: the read half of what its capabilities
			// map to. The apply job writes what they map to (scoped or not: apply enforces the
			// scope), and reads the installation.
			// A job that runs no model (a script's, a human actor's) may hold what the unscoped
			// capabilities map to.
			allowed, readHalf := maps.Clone(baseline), maps.Clone(baseline)
			applyMay := map[string]string{"contents": "read"}
			for _, c := range a.Capabilities {
				name, scope, _ := strings.Cut(c, "@")
				if name == "code:propose" || name == "code:review" {
					continue // realized by the trusted jobs, checked against effect
				}
				for s, acc := range standard[name] {
					if level(readHalf[s]) < level("read") {
						readHalf[s] = "read"
					}
					if scope == "" && level(acc) > level(allowed[s]) {
						allowed[s] = acc // GitHub cannot scope a permission
					}
					if slices.Contains(applied, name) && level(acc) > level(applyMay[s]) {
						applyMay[s] = acc
					}
				}
			}
			wpath := filepath.Join(root, filepath.FromSlash(a.Workflow))
			raw, err := os.ReadFile(wpath)
			if err != nil {
				t.Fatalf("actor %s: %v", a.Name, err)
			}
			var wf struct {
				Permissions *map[string]string `yaml:"permissions"`
				Jobs        map[string]struct {
					Permissions map[string]string `yaml:"permissions"`
					Needs       any               `yaml:"needs"`
					Environment string            `yaml:"environment"`
					Env         map[string]string `yaml:"env"`
					Steps       []struct {
						Name string            `yaml:"name"`
						Env  map[string]string `yaml:"env"`
						Run  string            `yaml:"run"`
					} `yaml:"steps"`
				} `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(raw, &wf); err != nil {
				t.Fatalf("%s: %v", wpath, err)
			}
			if wf.Permissions == nil || len(*wf.Permissions) != 0 {
				t.Errorf("%s: the workflow top level must be permissions: {}", wpath)
			}
			for id, job := range wf.Jobs {
				jobs++
				if job.Permissions == nil {
					t.Errorf("%s: job %s has no permissions block (it would get the repository default)", wpath, id)
				}
				// A job runs a model when a step runs the agent CLI (its words are the step's
				// AUTONOMY_AGENT_* env) or a step playbook (its agents).
				oidc, model, installs := false, false, false
				for _, s := range job.Steps {
					if _, ok := s.Env["AUTONOMY_OIDC_AUDIENCE"]; ok {
						oidc = true
					}
					for k := range s.Env {
						model = model || strings.HasPrefix(k, "AUTONOMY_AGENT_")
					}
					model = model || strings.Contains(s.Run, `"$AUTONOMY_BIN" playbook run `)
					if s.Name == "Install autonomy" && (strings.Contains(s.Run, "AUTONOMY_BIN=") || s.Env["AUTONOMY_PROBLEM"] != "") {
						installs = true
					}
				}
				may := allowed
				if model {
					may = readHalf
				}
				if job.Environment != "" {
					// An approval job fails closed: before anything else runs autonomy, it proves
					// its approval (autonomy gh gate), reading its environment and its run's
					// review history, which takes actions: read and nothing more.
					gated := false
					for _, s := range job.Steps {
						if strings.HasPrefix(s.Run, `"$AUTONOMY_BIN" `) {
							gated = s.Run == "\"$AUTONOMY_BIN\" gh gate\n" && s.Env["AUTONOMY_ENVIRONMENT"] == job.Environment
							break
						}
					}
					if !gated {
						t.Errorf("%s: job %s is gated by environment %s but does not first prove its approval with autonomy gh gate", wpath, id, job.Environment)
					}
					may = map[string]string{}
					for s, acc := range allowed {
						may[s] = acc
					}
					if level(may["actions"]) < level("read") {
						may["actions"] = "read"
					}
				}
				if model {
					// No job that runs a model holds any write permission (id-token: write mints
					// the model's own credential, checked below).
					for scope, acc := range job.Permissions {
						if acc == "write" && scope != "id-token" {
							t.Errorf("%s: job %s runs the model and holds %s: write", wpath, id, scope)
						}
					}
				}
				kind, ok := effect[id]
				if id == "apply" {
					kind, ok = applyMay, true
				}
				if ok {
					may = kind
					if model {
						t.Errorf("%s: trusted job %s runs the model", wpath, id)
					}
					for k, v := range job.Env {
						// A trusted job carries no text an outsider wrote.
						if strings.Contains(v, ".body") || strings.Contains(v, ".title") {
							t.Errorf("%s: trusted job %s reads %s from %s", wpath, id, k, v)
						}
					}
					if needs, _ := job.Needs.(string); needs != effectNeeds[id] || !installs {
						t.Errorf("%s: trusted job %s must follow the job %q (needs: %v) and install the autonomy that compiled it (%v)", wpath, id, effectNeeds[id], job.Needs, installs)
					}
					runs := false
					for _, s := range job.Steps {
						runs = runs || strings.HasPrefix(s.Run, `"$AUTONOMY_BIN" gh `+id+` `)
					}
					if !runs {
						t.Errorf("%s: trusted job %s does not run autonomy gh %s", wpath, id, id)
					}
					held := false
					for _, want := range effectCapability[id] {
						held = held || holds(a.Capabilities, want)
					}
					if !held {
						t.Errorf("%s: job %s, but actor %s holds none of %v", wpath, id, a.Name, effectCapability[id])
					}
				}
				for scope, acc := range job.Permissions {
					if scope == "id-token" && acc == "write" && oidc && model {
						continue // the model credential is minted by OIDC in this job
					}
					if level(acc) == 0 || level(acc) > level(may[scope]) {
						t.Errorf("%s: job %s holds %s: %s, beyond what %v maps to", wpath, id, scope, acc, a.Capabilities)
					}
				}
				if job.Permissions["contents"] == "write" && job.Permissions["statuses"] == "write" {
					t.Errorf("%s: job %s holds both contents: write and statuses: write", wpath, id)
				}
			}
		}
	}
	if jobs == 0 {
		t.Fatal("no job checked")
	}
}

// holds reports whether caps holds capability c, scoped or not.
func holds(caps []string, c string) bool {
	for _, x := range caps {
		if x == c || strings.HasPrefix(x, c+"@") {
			return true
		}
	}
	return false
}
