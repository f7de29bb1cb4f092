package effect

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/substrates/ghactions/ghfake"
)

// TestResumeAskRefusals: what the resume of a paused step playbook trusts is checked against
// what no job's token can forge — the run (its workflow, branch and event, from GitHub), the
// times and edits of the comments, the maintainer's own command — and the pause is spent once by
// deleting the run's artifact. Every refusal says why.
func TestResumeAskRefusals(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	wf := ghfake.Workflow{Dispatch: true, Inputs: []string{"ITEM"}}
	fake, err := ghfake.New(ghfake.Options{Token: "tok", Now: clock, Collaborators: map[string]string{"ada": "admin"},
		Workflows: map[string]ghfake.Workflow{"triage.yml": wf, "deploy.yml": wf}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	client := github.NewClient(nil).WithAuthToken("tok")
	client.BaseURL, _ = url.Parse(fake.URL)
	env := func(actor, run string) *Env {
		e := &Env{Client: client, Owner: "o", Repo: "r", Actor: actor, RunID: run, Out: io.Discard, Now: clock}
		e.Policy.Box.TaskStates = map[string]string{"input-required": "needs-input"}
		return e
	}
	ctx := context.Background()
	dispatch := func(file, ref string) string {
		t.Helper()
		if _, err := client.Actions.CreateWorkflowDispatchEventByFileName(ctx, "o", "r", file, github.CreateWorkflowDispatchEventRequest{Ref: ref}); err != nil {
			t.Fatal(err)
		}
		runs := fake.Runs()
		return strconv.FormatInt(runs[len(runs)-1].ID, 10)
	}
	item := fake.AddIssue("a report", "")
	// ask posts an elicitation of actor naming run, and the maintainer's answer to it.
	ask := func(actor, run string) (*Ask, int64) {
		t.Helper()
		a, err := EngageElicitation(ctx, env(actor, run), actor, item, "3", "Which team?", Elicitation{Kind: "select", Options: []string{"api", "ui"}})
		if err != nil {
			t.Fatal(err)
		}
		body := "/agent answer " + a.Token + " api"
		id, err := fake.AddComment(item, "ada", body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Resolve(ctx, env(actor, run), Resolution{Item: item, By: "ada", Verb: "answer", Token: a.Token, Note: "api", CommentID: id}); err != nil {
			t.Fatal(err)
		}
		return a, id
	}
	refused := func(e *Env, token, run, why string) {
		t.Helper()
		_, err := ResumeAsk(ctx, e, item, token, run)
		var r *Refused
		if !errors.As(err, &r) || !strings.Contains(r.Reason, why) {
			t.Errorf("resume of %s: %v, want it refused saying %q", run, err, why)
		}
	}

	run := dispatch("triage.yml", "main")
	now = now.Add(time.Minute)
	good, cmdID := ask("triage", run)
	a, err := ResumeAsk(ctx, env("triage", "9"), item, good.Token, run)
	if err != nil || a.Answer != "api" || a.Resolved != "answer" {
		t.Fatalf("the answered ask: %+v %v", a, err)
	}
	deployRun := dispatch("deploy.yml", "main")
	refused(env("deploy", "9"), good.Token, deployRun, "is triage's, not deploy's")
	refused(env("triage", "9"), good.Token, deployRun, "ran .github/workflows/deploy.yml, not .github/workflows/triage.yml")
	refused(env("deploy", "9"), good.Token, run, "ran .github/workflows/triage.yml, not .github/workflows/deploy.yml")
	refused(env("triage", "9"), good.Token, "123456", "is not a run of this repository")

	// An ask naming a run that started after it was posted is not that run's.
	now = now.Add(time.Minute)
	later := dispatch("triage.yml", "main")
	now = now.Add(time.Minute)
	old, _ := ask("triage", later) // posted after later started: fine
	if _, err := ResumeAsk(ctx, env("triage", "9"), item, old.Token, later); err != nil {
		t.Errorf("an ask posted during its run: %v", err)
	}
	early, _ := ask("triage", "0") // a marker naming a run not started yet
	now = now.Add(time.Minute)
	next := dispatch("triage.yml", "main")
	is, _ := fake.Issue(item)
	for i, c := range is.Comments {
		if strings.Contains(c, "token="+early.Token) && strings.Contains(c, "autonomy:ask") {
			// any job's token can rewrite the bot's marker to name another run
			if err := fake.EditComment(is.CommentIDs[i], strings.Replace(c, "run=0 ", "run="+next+" ", 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	refused(env("triage", "9"), early.Token, next, "was edited after it was posted")

	// The maintainer's command edited after it was recorded: its answer is not trusted.
	if err := fake.EditComment(cmdID, "/agent answer "+good.Token+" ui"); err != nil {
		t.Fatal(err)
	}
	refused(env("triage", "9"), good.Token, run, "was edited after it was given")

	// The pause is spent once: its artifact deleted; a second spend refuses.
	if _, ok := fake.AddArtifact(mustID(t, later), "autonomy-steps"); !ok {
		t.Fatal("artifact")
	}
	if err := SpendPausedRun(ctx, env("triage", "9"), later, "autonomy-steps"); err != nil || fake.HasArtifact(mustID(t, later), "autonomy-steps") {
		t.Fatalf("spend: %v", err)
	}
	var r *Refused
	if err := SpendPausedRun(ctx, env("triage", "9"), later, "autonomy-steps"); !errors.As(err, &r) || !strings.Contains(r.Reason, "resumed already") {
		t.Errorf("a second spend: %v", err)
	}
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
