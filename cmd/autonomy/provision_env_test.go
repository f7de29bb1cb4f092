package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

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
// changes nothing. The approval job's gate (autonomy gh gate) refuses before provision and,
// after it, until the run's review history approves the environment.
func TestProvisionReleaseGate(t *testing.T) {
	fake := provisionFakeWith(t, ghfake.Options{Collaborators: map[string]string{"ada": "admin", "bob": "write"},
		Workflows: map[string]ghfake.Workflow{"releaser.yml": {Dispatch: true}}})
	runID, err := fake.AddRun("releaser.yml", "workflow_dispatch")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_REPOSITORY", "o/r")
	t.Setenv("GITHUB_RUN_ID", strconv.FormatInt(runID, 10))
	t.Setenv("AUTONOMY_ENVIRONMENT", "autonomy-releaser-approve")
	t.Setenv("AUTONOMY_POLICY", "")
	gate := func(wantCode int, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Run([]string{"gh", "gate"}, nil, &out, &errb)
		if code != wantCode || !strings.Contains(out.String()+errb.String(), want) {
			t.Fatalf("gh gate: exit %d, want %d and %q\n%s%s", code, wantCode, want, out.String(), errb.String())
		}
	}
	gate(1, "environment autonomy-releaser-approve does not exist, so nobody approved this job: run `autonomy provision PROFILE --repo o/r`")
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
	gate(1, "environment autonomy-releaser-approve has required reviewers, but run "+strconv.FormatInt(runID, 10)+" holds no approval of it")
	if err := fake.Review(runID, "ada", "approved", "", "autonomy-releaser-approve"); err != nil {
		t.Fatal(err)
	}
	gate(0, "approved by ada")
}

// TestGHGateBadEnv: the gate refuses, with exit 2 and the variable to fix, an environment the
// compiled job would never give it.
func TestGHGateBadEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "GITHUB_RUN_ID": "1"}, "AUTONOMY_ENVIRONMENT is not set"},
		{map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "AUTONOMY_ENVIRONMENT": "e"}, "GITHUB_RUN_ID is not set"},
		{map[string]string{"GITHUB_REPOSITORY": "o/r", "GH_TOKEN": "t", "GITHUB_RUN_ID": "1", "AUTONOMY_ENVIRONMENT": "../../x"}, `the environment name "../../x" is not one autonomy compiles`},
		{map[string]string{"GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "1", "AUTONOMY_ENVIRONMENT": "e"}, "GH_TOKEN is not set"},
	} {
		for _, k := range []string{"GITHUB_REPOSITORY", "GH_TOKEN", "GITHUB_RUN_ID", "AUTONOMY_ENVIRONMENT", "GITHUB_API_URL", "AUTONOMY_POLICY"} {
			t.Setenv(k, c.env[k])
		}
		code, out, errOut := run(t, "gh", "gate")
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(out, "::error") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want 2 and %q", c.env, code, out, errOut, c.want)
		}
	}
}
