package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghfake"
)

// manifestOnly is a substrate whose output is one manifest.
type manifestOnly struct {
	substrates.Substrate
	data string
}

func (m manifestOnly) Compile(*ir.Profile) (substrates.Output, error) {
	return substrates.Output{Files: []substrates.File{{Path: ghactions.ManifestPath, Data: []byte(m.data)}}}, nil
}

type noFiles struct{ substrates.Substrate }

func (noFiles) Compile(*ir.Profile) (substrates.Output, error) { return substrates.Output{}, nil }

// TestApprovalEnvironments: the environments are read from the compiled manifest, every actor's,
// sorted, each once; a manifest that is not JSON or is missing is an error.
func TestApprovalEnvironments(t *testing.T) {
	got, err := approvalEnvironments(manifestOnly{data: `{"actors":[{"name":"b","environments":["autonomy-b-x","autonomy-a-y"]},{"name":"c"},{"name":"a","environments":["autonomy-a-y"]}]}`}, nil)
	if err != nil || !slices.Equal(got, []string{"autonomy-a-y", "autonomy-b-x"}) {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := approvalEnvironments(manifestOnly{data: `{`}, nil); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("bad manifest: %v", err)
	}
	if _, err := approvalEnvironments(noFiles{}, nil); err == nil || !strings.Contains(err.Error(), "has no") {
		t.Errorf("no manifest: %v", err)
	}
}

// TestProvisionNoEnvironments: a profile without workflow playbooks provisions no environment
// (the JSON plan lists none) and does not need maintainers.
func TestProvisionNoEnvironments(t *testing.T) {
	provisionFake(t)
	out, code := provisionRun(t, "--dry-run", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var plan struct {
		Steps []struct{ What string } `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Steps) == 0 {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range plan.Steps {
		if strings.HasPrefix(s.What, "environment ") {
			t.Errorf("unexpected step %q", s.What)
		}
	}
}

// TestProvisionReleaseGate: the bundled profile whose releaser is a workflow playbook with an
// approval step, end to end: the dry run plans its environment and creates nothing; the run
// creates it with the admins (no maintainers variable) as required reviewers; a second run
// changes nothing.
func TestProvisionReleaseGate(t *testing.T) {
	fake := provisionFakeWith(t, ghfake.Options{Collaborators: map[string]string{"ada": "admin", "bob": "write"}})
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Run(append([]string{"provision", "../../profiles/release-gate", "--repo", "o/r"}, args...), nil, &out, &errb); code != 0 {
			t.Fatalf("provision %v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out.String()
	}
	if out := run("--dry-run"); !strings.Contains(out, "environment autonomy-releaser-approve") || len(fake.Environments()) != 0 {
		t.Fatalf("dry run: %d environments made\n%s", len(fake.Environments()), out)
	}
	run()
	envs := fake.Environments()
	if len(envs) != 1 || envs[0].Name != "autonomy-releaser-approve" || !slices.Equal(envs[0].Reviewers, []int64{ghfake.UserID("ada")}) || envs[0].CanAdminsBypass {
		t.Fatalf("environments after the run: %+v", envs)
	}
	if out := run(); !strings.Contains(out, "\n0 changed,") {
		t.Fatalf("a second run changes something:\n%s", out)
	}
}
