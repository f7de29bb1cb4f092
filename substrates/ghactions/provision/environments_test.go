package provision

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

func envFake(t *testing.T, maintainers string, collab map[string]string) (*ghfake.Server, *github.Client) {
	t.Helper()
	s, err := ghfake.New(ghfake.Options{Token: "t", Collaborators: collab})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := github.NewClient(s.Client()).WithAuthToken("t")
	c.BaseURL, _ = url.Parse(s.URL)
	if maintainers != "" {
		if _, err := c.Actions.CreateRepoVariable(context.Background(), "o", "r", &github.ActionsVariable{Name: "MAINTAINERS", Value: maintainers}); err != nil {
			t.Fatal(err)
		}
	}
	return s, c
}

func runEnvs(t *testing.T, c *github.Client, envs []string, dry bool) ([]Step, error) {
	t.Helper()
	pv := &provisioner{c: c, owner: "o", repo: "r", dry: dry}
	pv.environments(context.Background(), Policy{Environments: envs, MaintainersVar: "MAINTAINERS"})
	if len(pv.errs) > 0 {
		return pv.steps, pv.errs[0]
	}
	return pv.steps, nil
}

func puts(s *ghfake.Server) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == http.MethodPut {
			n++
		}
	}
	return n
}

func actions(steps []Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Action+" "+s.What)
	}
	return strings.Join(out, "; ")
}

// TestEnvironments: the dry run plans and changes nothing; a run creates each environment with
// the maintainers as required reviewers (admins unable to bypass); a second run changes nothing.
func TestEnvironments(t *testing.T) {
	fake, c := envFake(t, "alice @bob", nil)
	envs := []string{"autonomy-releaser-ship", "autonomy-releaser-tag"}
	steps, err := runEnvs(t, c, envs, true)
	if err != nil || actions(steps) != "create environment autonomy-releaser-ship; create environment autonomy-releaser-tag" {
		t.Fatalf("dry run: %v %+v", err, steps)
	}
	if steps[0].To != "reviewers alice, bob" {
		t.Errorf("plan to %q", steps[0].To)
	}
	if len(fake.Environments()) != 0 || puts(fake) != 0 {
		t.Fatalf("the dry run changed something: %+v", fake.Environments())
	}
	if _, err := runEnvs(t, c, envs, false); err != nil {
		t.Fatal(err)
	}
	got := fake.Environments()
	want := []int64{ghfake.UserID("alice"), ghfake.UserID("bob")}
	if len(got) != 2 || got[0].Name != envs[0] || got[1].Name != envs[1] {
		t.Fatalf("environments %+v", got)
	}
	for _, e := range got {
		if !slices.Equal(e.Reviewers, want) || e.CanAdminsBypass || e.WaitTimer != 0 {
			t.Errorf("environment %+v, want reviewers %v and no admin bypass", e, want)
		}
	}
	before := puts(fake)
	steps, err = runEnvs(t, c, envs, false)
	if err != nil || actions(steps) != "ok environment autonomy-releaser-ship; ok environment autonomy-releaser-tag" || puts(fake) != before {
		t.Fatalf("second run: %v %s (%d writes)", err, actions(steps), puts(fake)-before)
	}
}

// TestEnvironmentsStricterKept: an environment whose owner set required reviewers is left as it is
// (reported), one without reviewers gets the maintainers and keeps its wait timer and branch policy.
func TestEnvironmentsStricterKept(t *testing.T) {
	fake, c := envFake(t, "alice", map[string]string{"carol": "admin", "dave": "write"})
	owned := ghfake.Environment{Name: "autonomy-a-gate", Reviewers: []int64{ghfake.UserID("carol"), ghfake.UserID("dave")}, WaitTimer: 30, ProtectedBranches: true}
	timed := ghfake.Environment{Name: "autonomy-b-gate", WaitTimer: 60, CustomBranchPolicies: true, CanAdminsBypass: false}
	fake.SetEnvironment(owned)
	fake.SetEnvironment(timed)
	steps, err := runEnvs(t, c, []string{"autonomy-a-gate", "autonomy-b-gate"}, false)
	if err != nil || actions(steps) != "left environment autonomy-a-gate; update environment autonomy-b-gate" {
		t.Fatalf("%v %s", err, actions(steps))
	}
	if !strings.Contains(steps[0].Note, "set by the repository's owner") || steps[0].From != "reviewers carol, dave" {
		t.Errorf("left step %+v", steps[0])
	}
	if !strings.Contains(steps[1].Note, "wait timer 60 min") || !strings.Contains(steps[1].Note, "branch policy") {
		t.Errorf("update step %+v", steps[1])
	}
	got := fake.Environments()
	if a := got[0]; !slices.Equal(a.Reviewers, owned.Reviewers) || a.WaitTimer != 30 || !a.ProtectedBranches {
		t.Errorf("the owner's environment changed: %+v", a)
	}
	if b := got[1]; !slices.Equal(b.Reviewers, []int64{ghfake.UserID("alice")}) || b.WaitTimer != 60 || !b.CustomBranchPolicies || b.CanAdminsBypass {
		t.Errorf("updated environment %+v: want alice, wait 60, custom branch policies, no bypass", b)
	}
}

// TestEnvironmentsMaintainers: the admins when the variable is unset; at most 6 reviewers; no
// maintainers at all is an error naming the variable, and nothing is created.
func TestEnvironmentsMaintainers(t *testing.T) {
	fake, c := envFake(t, "", map[string]string{"zed": "admin", "amy": "admin", "wes": "write"})
	if _, err := runEnvs(t, c, []string{"autonomy-x-y"}, false); err != nil {
		t.Fatal(err)
	}
	if e := fake.Environments(); len(e) != 1 || !slices.Equal(e[0].Reviewers, []int64{ghfake.UserID("amy"), ghfake.UserID("zed")}) {
		t.Errorf("admins as reviewers: %+v", e)
	}

	fake, c = envFake(t, "a1 a2 a3 a4 a5 a6 a7", nil)
	steps, err := runEnvs(t, c, []string{"autonomy-x-y"}, false)
	if err != nil || len(steps) != 1 || !strings.Contains(steps[0].Note, "1 more maintainers not added") {
		t.Fatalf("%v %+v", err, steps)
	}
	if e := fake.Environments(); len(e) != 1 || len(e[0].Reviewers) != 6 || e[0].Reviewers[5] != ghfake.UserID("a6") {
		t.Errorf("seven maintainers: %+v", e)
	}

	fake, c = envFake(t, "", nil)
	steps, err = runEnvs(t, c, []string{"autonomy-x-y"}, false)
	if err == nil || !strings.Contains(err.Error(), "MAINTAINERS") || len(steps) != 0 || len(fake.Environments()) != 0 {
		t.Fatalf("no maintainers: %v %+v %+v", err, steps, fake.Environments())
	}
}
