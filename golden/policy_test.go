package golden

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestPolicyReachesEveryAgent reads the committed installations: on both substrates the whole
// policy block is installed as .autonomy/policy.json (the same JSON on each, every box key the
// profile wrote carried), and every agent gets its path in AUTONOMY_POLICY: each gh-actions
// agent job, each local agent's launcher config.
func TestPolicyReachesEveryAgent(t *testing.T) {
	profiles, err := filepath.Glob("*/gh-actions")
	if err != nil || len(profiles) == 0 {
		t.Fatalf("no gh-actions goldens: %v", err)
	}
	for _, gh := range profiles {
		prof := filepath.Dir(gh)
		policies := map[string]map[string]any{}
		for _, target := range []string{"gh-actions", "local"} {
			data, err := os.ReadFile(filepath.Join(prof, target, ".autonomy", "policy.json"))
			if os.IsNotExist(err) && target == "local" {
				continue // a profile without the local target
			}
			if err != nil {
				t.Fatal(err)
			}
			var p map[string]any
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatalf("%s/%s policy.json: %v", prof, target, err)
			}
			delete(p, "//")
			if _, ok := p["box"].(map[string]any); !ok {
				t.Errorf("%s/%s policy.json has no box: %v", prof, target, p)
			}
			policies[target] = p
		}
		if l, ok := policies["local"]; ok && !reflect.DeepEqual(l, policies["gh-actions"]) {
			t.Errorf("%s: the policy differs between substrates:\nlocal %v\ngh-actions %v", prof, l, policies["gh-actions"])
		}
		wfs, _ := filepath.Glob(filepath.Join(gh, ".github", "workflows", "*.yml"))
		for _, wf := range wfs {
			data, err := os.ReadFile(wf)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Jobs map[string]struct {
					Env map[string]string `yaml:"env"`
				} `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatalf("%s: %v", wf, err)
			}
			if job, ok := doc.Jobs["agent"]; ok && job.Env["AUTONOMY_POLICY"] != ".autonomy/policy.json" {
				t.Errorf("%s: the agent job's AUTONOMY_POLICY is %q", wf, job.Env["AUTONOMY_POLICY"])
			}
		}
		actors, _ := filepath.Glob(filepath.Join(prof, "local", ".autonomy", "local", "actors", "*.json"))
		for _, a := range actors {
			data, err := os.ReadFile(a)
			if err != nil {
				t.Fatal(err)
			}
			var cfg struct {
				Kind string            `json:"kind"`
				Env  map[string]string `json:"env"`
			}
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			if cfg.Kind == "agent" && cfg.Env["AUTONOMY_POLICY"] != ".autonomy/policy.json" {
				t.Errorf("%s: AUTONOMY_POLICY is %q", strings.TrimPrefix(a, prof+"/"), cfg.Env["AUTONOMY_POLICY"])
			}
		}
	}
	// The sdlc profile's governance knobs reach the agents verbatim.
	var sdlc struct {
		Box map[string]any `json:"box"`
	}
	data, err := os.ReadFile(filepath.Join("sdlc", "gh-actions", ".autonomy", "policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sdlc); err != nil || sdlc.Box["max_open_agent_prs"] != 3.0 || sdlc.Box["taskStates"] == nil {
		t.Errorf("sdlc policy box: %v %v", sdlc.Box, err)
	}
}
