package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/substrates/ghactions/ghfake"
)

// envFake is provisionFake with two admins (the maintainers, by the fallback) and a writer.
func envFake(t *testing.T) *ghfake.Server {
	t.Helper()
	return provisionFakeWith(t, ghfake.Options{Collaborators: map[string]string{"alice": "admin", "carol": "admin", "bob": "write"}})
}

func provisionGate(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(append([]string{"provision", "../../profiles/release-gate", "--repo", "o/r"}, args...), nil, &out, &errb)
	return out.String() + errb.String(), code
}

func envClient(t *testing.T, f *ghfake.Server) *github.Client {
	c := github.NewClient(nil).WithAuthToken("ghs_admin")
	u, err := url.Parse(f.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = u
	return c
}

// TestProvisionEnvironments: the dry run lists the approval environment and creates nothing; a
// run creates it with the maintainers as required reviewers; a second run changes nothing.
func TestProvisionEnvironments(t *testing.T) {
	f := envFake(t)
	out, code := provisionGate(t, "--dry-run")
	if code != 0 || !strings.Contains(out, "create  environment autonomy-releaser-approve: missing → required reviewers alice, carol (admins)") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if envs := f.Environments(); len(envs) != 0 {
		t.Fatalf("the dry run created %v", envs)
	}
	out, code = provisionGate(t, "--dry-run", "--format", "json")
	if code != 0 || !strings.Contains(out, `"what": "environment autonomy-releaser-approve"`) || len(f.Environments()) != 0 {
		t.Fatalf("dry run json: exit %d\n%s", code, out)
	}

	if out, code = provisionGate(t); code != 0 {
		t.Fatalf("provision: exit %d\n%s", code, out)
	}
	e, ok := f.Environments()["autonomy-releaser-approve"]
	want := []int64{ghfake.UserID("alice"), ghfake.UserID("carol")}
	if !ok || !slices.Equal(e.Reviewers, want) || e.WaitTimer != 0 {
		t.Fatalf("environment %+v (%v), want reviewers %v", e, ok, want)
	}

	out, code = provisionGate(t, "--format", "json")
	var doc struct {
		Steps []struct{ What, Action string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	seen := false
	for _, s := range doc.Steps {
		seen = seen || s.What == "environment autonomy-releaser-approve"
		if s.Action != "ok" {
			t.Errorf("the second run would %s %s", s.Action, s.What)
		}
	}
	if !seen {
		t.Errorf("the second run does not report the environment:\n%s", out)
	}
}

// TestProvisionEnvironmentsKeepStricter: an environment requiring its own reviewers is left
// as it is and said so; one requiring none gets the maintainers and keeps its wait timer.
func TestProvisionEnvironmentsKeepStricter(t *testing.T) {
	ctx := context.Background()
	t.Run("own reviewers", func(t *testing.T) {
		f := envFake(t)
		c := envClient(t, f)
		if _, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "o", "r", "autonomy-releaser-approve", &github.CreateUpdateEnvironment{
			WaitTimer: github.Int(30), Reviewers: []*github.EnvReviewers{{Type: github.String("User"), ID: github.Int64(ghfake.UserID("dave"))}}}); err != nil {
			t.Fatal(err)
		}
		before := f.Environments()
		out, code := provisionGate(t)
		if code != 0 || !strings.Contains(out, "left    environment autonomy-releaser-approve: 1 required reviewers, wait timer 30 min (it requires its own reviewers; kept as the owner set it)") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if after := f.Environments(); !slices.Equal(after["autonomy-releaser-approve"].Reviewers, before["autonomy-releaser-approve"].Reviewers) || after["autonomy-releaser-approve"].WaitTimer != 30 {
			t.Errorf("the environment changed: %+v → %+v", before, after)
		}
	})
	t.Run("no reviewers", func(t *testing.T) {
		f := envFake(t)
		c := envClient(t, f)
		if _, _, err := c.Repositories.CreateUpdateEnvironment(ctx, "o", "r", "autonomy-releaser-approve", &github.CreateUpdateEnvironment{WaitTimer: github.Int(10)}); err != nil {
			t.Fatal(err)
		}
		out, code := provisionGate(t)
		if code != 0 || !strings.Contains(out, "update  environment autonomy-releaser-approve: no required reviewers, wait timer 10 min → required reviewers alice, carol (admins) (kept: wait timer 10 min)") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		e := f.Environments()["autonomy-releaser-approve"]
		if e.WaitTimer != 10 || len(e.Reviewers) != 2 {
			t.Errorf("environment %+v", e)
		}
	})
}
