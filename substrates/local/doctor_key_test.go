//go:build unix

package local

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// doctor flags the quickstart's placeholder key without the scripted model's URL (model.env
// exported before dev model wrote it): sessions would send it to the provider itself and retry
// until cancelled. With the URL, or with a key of one's own, the credential is fine.
func TestDoctorFlagsThePlaceholderKeyWithoutItsModel(t *testing.T) {
	dir := installFleet(t, handsFleet("codex"), false)
	up, err := net.Listen("tcp", "127.0.0.1:0") // a model that answers
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	down, err := net.Listen("tcp", "127.0.0.1:0") // and one stopped, its URL still exported
	if err != nil {
		t.Fatal(err)
	}
	down.Close()
	upURL, downURL := "http://"+up.Addr().String()+"/v1", "http://"+down.Addr().String()+"/v1"
	for _, c := range []struct {
		env  []string
		ok   bool
		want string
	}{
		{[]string{"OPENAI_API_KEY=trial"}, false, "OPENAI_API_KEY=trial is the scripted model's placeholder, and OPENAI_BASE_URL is unset"},
		{[]string{"OPENAI_API_KEY=trial", "OPENAI_BASE_URL=" + upURL}, true, "the model proxy is OPENAI_BASE_URL=" + upURL},
		{[]string{"OPENAI_API_KEY=trial", "OPENAI_BASE_URL=" + downURL}, false, "but nothing answers at " + down.Addr().String()},
		{[]string{"OPENAI_API_KEY=sk-mine", "OPENAI_BASE_URL=https://models.example.com/v1"}, true, "the model proxy is OPENAI_BASE_URL=https://models.example.com/v1"},
		{[]string{"OPENAI_API_KEY=sk-mine"}, true, "set"},
	} {
		var got *Check
		checks := Doctor(context.Background(), dir, append([]string{"PATH=/usr/bin:/bin"}, c.env...))
		for i := range checks {
			if checks[i].Name == "credential OPENAI_API_KEY" {
				got = &checks[i]
			}
		}
		if got == nil || got.OK != c.ok || !strings.Contains(got.Detail, c.want) || !c.ok && !strings.Contains(got.Fix, "model.env") {
			t.Errorf("env %v: the credential check is %+v, want ok=%v saying %q", c.env, got, c.ok, c.want)
		}
	}
}

// A launch with the quickstart's placeholder key and no scripted model's URL (model.env exported
// before dev model wrote it) is refused as doctor flags it, naming the fix, and nothing is
// recorded: the session used to start, its agent send the placeholder to the provider, retry for
// minutes and fail saying only "exit status 1". The tick's schedule is refused the same way, and
// a session that starts anyway (its supervisor's environment is another) fails before its agent
// runs. With the URL it launches.
func TestLaunchRefusesThePlaceholderKeyWithoutItsModel(t *testing.T) {
	dir := installFleet(t, proxyFleet("codex", ""), true)
	path := fakeProgram(t, "codex", "#!/bin/sh\ncat > /dev/null\n"+deliverResult+"\n")
	trial := []string{"PATH=" + path, "HOME=" + t.TempDir(), "OPENAI_API_KEY=trial"}
	r := newRunner(t, dir, Options{Env: trial})
	const want = "OPENAI_API_KEY=trial is the scripted model's placeholder, and OPENAI_BASE_URL is unset: sessions would send it to the provider itself (export $(cat model.env)"
	_, err := r.Launch(t.Context(), LaunchRequest{Actor: "worker"})
	if _, refused := err.(*RefusedError); !refused || !strings.Contains(err.Error(), `actor "worker": `+want) {
		t.Fatalf("launch with the trial key and no URL: %v, want refused saying %q", err, want)
	}
	if ss, _ := r.Store.List(t.Context(), store.ListOptions{All: true}); len(ss) != 0 {
		t.Errorf("a refused launch recorded %d sessions", len(ss))
	}
	if err := r.Preflight("worker"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the schedule's preflight: %v", err)
	}

	// Its supervisor refuses it too, before any agent runs.
	cfg, err := r.In.Actor("worker")
	if err != nil {
		t.Fatal(err)
	}
	var ended string
	sv := &supervision{r: r, s: store.Session{ID: "1-test", Actor: "worker"}, cfg: cfg, end: func(status ir.SessionStatus, reason, _ string, _ *int) {
		ended = string(status) + ": " + reason
	}}
	if _, ok := sv.startProxy(t.Context()); ok || !strings.HasPrefix(ended, "failed: "+want) {
		t.Errorf("the supervisor started it: ok=%v, ended %q", ok, ended)
	}

	good := newRunner(t, dir, Options{Env: append(trial, "OPENAI_BASE_URL=http://127.0.0.1:9/v1")})
	s := launch(t, good, LaunchRequest{Actor: "worker"})
	if got := waitEnded(t, good, s.ID); got.Status != ir.Done {
		t.Errorf("with the URL it ended %s: %s", got.Status, got.Reason)
	}
	good.Wait()
}

// A session whose agent fails after its model's upstream failed ends with that cause, not only
// "exit status 1": the upstream, what went wrong, and, when the runner's environment named no
// URL for the API, that the credential went to the provider itself.
func TestSessionReasonNamesTheFailedUpstream(t *testing.T) {
	dir := installFleet(t, proxyFleet("codex", ""), true)
	path := fakeProgram(t, "codex", "#!/bin/sh\ncat > /dev/null\n"+
		`curl -s -o /dev/null -H "Authorization: Bearer $OPENAI_API_KEY" -H 'Content-Type: application/json' -d '{"model":"gpt-5.5","input":"hi"}' "$OPENAI_BASE_URL/responses"`+"\nexit 1\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := l.Addr().String()
	l.Close()
	r := newRunner(t, dir, Options{Env: append(operatorEnv(path), "OPENAI_BASE_URL=http://"+gone+"/v1")})
	s := launch(t, r, LaunchRequest{Actor: "worker"})
	got := waitEnded(t, r, s.ID)
	r.Wait()
	want := "the model's upstream http://" + gone + " failed: dial tcp " + gone + ": connect: connection refused (exit status 1)"
	if got.Status != ir.Failed || got.Reason != want {
		t.Errorf("ended %s: %q, want failed: %q\n%s", got.Status, got.Reason, want, sessionLogOf(r, s.ID))
	}

	// With no URL in the runner's environment, the reason says where the credential went.
	codex, _ := agent.Lookup("codex")
	f := modelproxy.Failure{API: modelproxy.OpenAI, Origin: "https://api.openai.com", Message: "failed: dial tcp: lookup api.openai.com: no such host"}
	if got, want := upstreamReason(f, []upstream{{preset: codex, key: "sk-x"}}), "the model's upstream https://api.openai.com failed: dial tcp: lookup api.openai.com: no such host; OPENAI_BASE_URL is unset, so OPENAI_API_KEY went to the provider itself (autonomy doctor checks it)"; got != want {
		t.Errorf("upstreamReason: %q, want %q", got, want)
	}
}

// doctor checks what codeHost: github needs of the runner: the repository its proposals go to
// and the runner's GitHub token (a proposer's session ended done, and its proposal went nowhere).
func TestDoctorChecksTheGitHubCodeHost(t *testing.T) {
	f := handsFleet("codex")
	f.yml = strings.Replace(f.yml, "targets: [local]\n", "targets: [local]\ncodeHost: github\n", 1)
	dir := installFleet(t, f, true)
	for _, c := range []struct {
		env  []string
		ok   bool
		want string
	}{
		{nil, true, "cannot tell which GitHub repository proposals go to"},
		{[]string{"GITHUB_REPOSITORY=acme/app"}, true, "acme/app, but the runner holds no GitHub token"},
		{[]string{"GITHUB_REPOSITORY=acme/app", "GH_TOKEN=ghp_x"}, true, "acme/app, with the runner's GitHub token"},
	} {
		var got *Check
		checks := Doctor(context.Background(), dir, append([]string{"PATH=/usr/bin:/bin"}, c.env...))
		for i := range checks {
			if checks[i].Name == "code host github" {
				got = &checks[i]
			}
		}
		if got == nil {
			t.Fatalf("env %v: no code host check", c.env)
		}
		// A note (sessions run without it): OK, with what to do.
		if note := !strings.Contains(got.Detail, "with the runner's"); got.OK != c.ok || !strings.Contains(got.Detail, c.want) || note != (got.Fix != "") {
			t.Errorf("env %v: %+v, want ok=%v saying %q", c.env, got, c.ok, c.want)
		}
	}
	// A fleet that proposes nothing is not told where proposals go.
	quiet := installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\ncodeHost: github\nactors:\n  sweep:\n    behavior: scripts/sweep.sh\n    triggers: [{ dispatch: true }]\n",
		files: map[string]string{"scripts/sweep.sh": "#!/bin/sh\n"}}, true)
	for _, c := range Doctor(context.Background(), quiet, []string{"PATH=/usr/bin:/bin"}) {
		if c.Name == "code host github" {
			t.Errorf("a fleet that proposes nothing: %+v", c)
		}
	}
}
