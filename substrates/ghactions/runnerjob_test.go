package ghactions

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// agentJob is the part of a compiled agent job these tests read.
type agentJob struct {
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Steps       []struct {
		Name string            `yaml:"name"`
		Uses string            `yaml:"uses"`
		Env  map[string]string `yaml:"env"`
		Run  string            `yaml:"run"`
	} `yaml:"steps"`
}

// TestAgentJobsThatCallTheRunner: every agent job whose actor holds an unscoped agent:launch,
// agent:list or agent:cancel installs autonomy (the trusted jobs' install step, before the
// checkout) and holds actions: write only with agent:launch or agent:cancel (read with
// agent:list); every other agent job installs nothing (a scoped agent:* gets no token
// permission). Every agent job names the installed policy in AUTONOMY_POLICY.
func TestAgentJobsThatCallTheRunner(t *testing.T) {
	for _, prof := range lintProfiles(t) {
		p, out := compileDir(t, prof)
		files := map[string][]byte{}
		for _, f := range out.Files {
			files[f.Path] = f.Data
		}
		var policy map[string]any
		if err := json.Unmarshal(files[substrates.PolicyPath], &policy); err != nil || policy["box"] == nil {
			t.Fatalf("%s: %s is not the policy as JSON: %v", prof, substrates.PolicyPath, err)
		}
		for _, a := range p.Actors {
			if a.Kind.Value == "human" {
				continue
			}
			var wf struct {
				Jobs map[string]agentJob `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(files[WorkflowPath(a.Name.Value)], &wf); err != nil {
				t.Fatal(err)
			}
			job, ok := wf.Jobs["agent"]
			if !ok { // a workflow playbook: every job of its steps names the actor and the policy
				if len(wf.Jobs) == 0 {
					t.Fatalf("%s/%s: no jobs", prof, a.Name.Value)
				}
				for id, j := range wf.Jobs {
					if j.Env[ActorEnv] != a.Name.Value || j.Env[substrates.PolicyEnv] != substrates.PolicyPath {
						t.Errorf("%s/%s: job %s env %v lacks %s or %s", prof, a.Name.Value, id, j.Env, ActorEnv, substrates.PolicyEnv)
					}
				}
				continue
			}
			var launches, lists, agentCap bool
			for _, c := range a.Capabilities {
				launches = launches || (c.Scope == "" && (c.Name == "agent:launch" || c.Name == "agent:cancel"))
				lists = lists || (c.Scope == "" && c.Name == "agent:list")
				agentCap = agentCap || (c.Scope == "" && (c.Name == "agent:launch" || c.Name == "agent:cancel" || c.Name == "agent:list"))
			}
			install := slices.IndexFunc(job.Steps, func(s struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			}) bool {
				return s.Name == installStepName
			})
			checkoutAt := slices.IndexFunc(job.Steps, func(s struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			}) bool {
				return strings.HasPrefix(s.Uses, "actions/checkout@")
			})
			weaveAt := slices.IndexFunc(job.Steps, func(s struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			}) bool {
				return s.Name == weaveStepName
			})
			name := prof + "/" + a.Name.Value
			// A step playbook's agent job runs it with autonomy playbook run.
			runsPlaybook := slices.ContainsFunc(job.Steps, func(s struct {
				Name string            `yaml:"name"`
				Uses string            `yaml:"uses"`
				Env  map[string]string `yaml:"env"`
				Run  string            `yaml:"run"`
			}) bool {
				return strings.Contains(s.Run, `"$AUTONOMY_BIN" playbook run`)
			})
			switch {
			case weaveAt >= 0 && (install < 0 || install > checkoutAt || weaveAt < checkoutAt):
				t.Errorf("%s weaves overlays but does not install autonomy before the checkout and weave after it", name)
			case agentCap && (install < 0 || install > checkoutAt):
				t.Errorf("%s holds agent:* but its agent job does not install autonomy before the checkout", name)
			case !agentCap && install >= 0 && weaveAt < 0 && !runsPlaybook && !a.Skill:
				// A skill's job installs autonomy for its model proxy (modelproxy.go) and MCP server
				// (safeoutputs.go).
				t.Errorf("%s holds no agent:*, runs no model, but its agent job installs autonomy", name)
			case a.Skill && (install < 0 || install > checkoutAt):
				t.Errorf("%s runs a model but its agent job does not install autonomy (its model proxy) before the checkout", name)
			}
			if agentCap && len(job.Steps[install].Env) == 0 {
				t.Errorf("%s: install step env %v", name, job.Steps[install].Env)
			}
			want := ""
			switch {
			case launches && !a.Skill:
				want = "write" // a script, which runs no model
			case launches, lists:
				want = "read"
			}
			if !slices.ContainsFunc(a.Capabilities, func(c ir.Capability) bool { return c.Name == "code:propose" }) && job.Permissions["actions"] != want {
				t.Errorf("%s: actions: %q, want %q (capabilities %v)", name, job.Permissions["actions"], want, capabilityStrings(a))
			}
			// A skill's job makes gh-actions the runner's default too: its launch is an effect.
			if (job.Env[SubstrateEnv] == Name) != (agentCap || a.Skill) {
				t.Errorf("%s: %s=%q", name, SubstrateEnv, job.Env[SubstrateEnv])
			}
			if job.Env[ActorEnv] != a.Name.Value || job.Env[substrates.PolicyEnv] != substrates.PolicyPath {
				t.Errorf("%s: job env %v lacks %s or %s", name, job.Env, ActorEnv, substrates.PolicyEnv)
			}
		}
	}
}
