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

	"github.com/autonomyhq/autonomy/internal/ghfake"
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
	refused := func(e *Env, a *Ask, run, why string) {
		t.Helper()
		_, err := ResumeAsk(ctx, e, item, a.Token, run, a.CommentID)
		var r *Refused
		if !errors.As(err, &r) || !strings.Contains(r.Reason, why) {
			t.Errorf("resume of %s: %v, want it refused saying %q", run, err, why)
		}
	}

	run := dispatch("triage.yml", "main")
	now = now.Add(time.Minute)
	good, cmdID := ask("triage", run)
	a, err := ResumeAsk(ctx, env("triage", "9"), item, good.Token, run, good.CommentID)
	if err != nil || a.Answer != "api" || a.Resolved != "answer" {
		t.Fatalf("the answered ask: %+v %v", a, err)
	}
	deployRun := dispatch("deploy.yml", "main")
	refused(env("deploy", "9"), good, deployRun, "is triage's, not deploy's")
	refused(env("triage", "9"), good, deployRun, "ran .github/workflows/deploy.yml, not .github/workflows/triage.yml")
	refused(env("deploy", "9"), good, run, "ran .github/workflows/triage.yml, not .github/workflows/deploy.yml")
	refused(env("triage", "9"), good, "123456", "is not a run of this repository")

	// An ask naming a run that started after it was posted is not that run's.
	now = now.Add(time.Minute)
	later := dispatch("triage.yml", "main")
	now = now.Add(time.Minute)
	old, _ := ask("triage", later) // posted after later started: fine
	if _, err := ResumeAsk(ctx, env("triage", "9"), item, old.Token, later, old.CommentID); err != nil {
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
	refused(env("triage", "9"), early, next, "was posted before run "+next+" started")
	// An ask of the run, edited afterwards (any job's token can): not trusted.
	now = now.Add(time.Minute)
	edited, _ := ask("triage", next)
	if err := fake.EditComment(edited.CommentID, strings.Replace(firstAsk(t, fake, item, edited.Token), "Which team?", "Which team, or none?", 1)); err != nil {
		t.Fatal(err)
	}
	refused(env("triage", "9"), edited, next, "was edited after it was posted")
	// Another comment than the one the run's ask job recorded: not that run's ask.
	if _, err := ResumeAsk(ctx, env("triage", "9"), item, old.Token, later, old.CommentID+1); err == nil || !strings.Contains(err.Error(), "is not the comment run") {
		t.Errorf("another comment than the recorded one: %v", err)
	}
	// A copy of an ask (same token, posted later by any job's token) never takes its place.
	if _, err := fake.AddComment(item, "", strings.Replace(firstAsk(t, fake, item, old.Token), "Which team?", "Which team, really?", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := ResumeAsk(ctx, env("triage", "9"), item, old.Token, later, old.CommentID); err != nil {
		t.Errorf("the ask with a copy after it: %v", err)
	}

	// The maintainer's command edited after it was recorded: its answer is not trusted.
	if err := fake.EditComment(cmdID, "/agent answer "+good.Token+" ui"); err != nil {
		t.Fatal(err)
	}
	refused(env("triage", "9"), good, run, "was edited after it was given")

	// The pause is the run's one artifact uploaded before the ask; spent once, by deleting it.
	var r *Refused
	if _, err := PausedArtifact(ctx, env("triage", "9"), later, "autonomy-steps", old); !errors.As(err, &r) || !strings.Contains(r.Reason, "no artifact autonomy-steps left") {
		t.Errorf("no artifact: %v", err)
	}
	now = now.Add(time.Minute)
	if _, ok := fake.AddArtifact(mustID(t, later), "autonomy-steps"); !ok {
		t.Fatal("artifact")
	}
	now = now.Add(time.Minute)
	posted, _ := ask("triage", later)
	fresh, err := ResumeAsk(ctx, env("triage", "9"), item, posted.Token, later, posted.CommentID) // as the resume reads it
	if err != nil {
		t.Fatal(err)
	}
	id, err := PausedArtifact(ctx, env("triage", "9"), later, "autonomy-steps", fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := SpendArtifact(ctx, env("triage", "9"), later, id); err != nil || fake.HasArtifact(mustID(t, later), "autonomy-steps") {
		t.Fatalf("spend: %v", err)
	}
	// The run's agent job run again (a new pause, uploaded after the ask): the old answer is not to it.
	now = now.Add(time.Minute)
	if _, ok := fake.AddArtifact(mustID(t, later), "autonomy-steps"); !ok {
		t.Fatal("artifact")
	}
	if _, err := PausedArtifact(ctx, env("triage", "9"), later, "autonomy-steps", fresh); !errors.As(err, &r) || !strings.Contains(r.Reason, "was uploaded after the ask") {
		t.Errorf("a pause uploaded after the ask: %v", err)
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

// firstAsk is the body of the ask comment with token on item n.
func firstAsk(t *testing.T, fake *ghfake.Server, n int, token string) string {
	t.Helper()
	is, _ := fake.Issue(n)
	for _, c := range is.Comments {
		if strings.HasPrefix(c, "<!-- autonomy:ask ") && strings.Contains(c, "token="+token) {
			return c
		}
	}
	t.Fatalf("no ask %s on #%d", token, n)
	return ""
}
