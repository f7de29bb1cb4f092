package golden

import (
	"encoding/json"
	"os"
	"path/filepath"
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
// permission, no job exceeds its actor's capability mapping, and no job holds both
// contents: write and statuses: write (the merge boundary).
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
			allowed := map[string]string{}
			for s, acc := range baseline {
				allowed[s] = acc
			}
			for _, c := range a.Capabilities {
				if strings.Contains(c, "@") {
					continue // GitHub cannot scope a permission: a scoped capability grants nothing
				}
				for s, acc := range standard[c] {
					if level(acc) > level(allowed[s]) {
						allowed[s] = acc
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
					Steps       []struct {
						Env map[string]string `yaml:"env"`
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
				oidc := false
				for _, s := range job.Steps {
					if _, ok := s.Env["AUTONOMY_OIDC_AUDIENCE"]; ok {
						oidc = true
					}
				}
				for scope, acc := range job.Permissions {
					if scope == "id-token" && acc == "write" && oidc {
						continue // the model credential is minted by OIDC in this job
					}
					if level(acc) == 0 || level(acc) > level(allowed[scope]) {
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
