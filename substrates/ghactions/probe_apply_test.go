//go:build unix

package ghactions_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/internal/testbin"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// scopeOn runs the battery's scope-refused check against the GitHub subject whose sessions'
// launches the apply jobs of out apply, with the autonomy binary exe.
func scopeOn(opts ghrun.RunnerOptions, out substrates.Output, exe string) conformance.Result {
	return appliedCheck(opts, out, exe, jobToken, "scope-refused")
}

// appliedCheck runs the battery's check against the GitHub subject whose sessions' launches the
// apply jobs of out apply, with the autonomy binary exe and token as the job's GITHUB_TOKEN.
func appliedCheck(opts ghrun.RunnerOptions, out substrates.Output, exe, token, check string) conformance.Result {
	target := conformance.Target{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
		s, err := ghactions.ProbeSubject(opts, false, out)
		if err == nil {
			err = ghactions.ProbeApply(s, opts, out, exe, token)
		}
		return s, err
	}}
	for _, r := range conformance.Run(context.Background(), []conformance.Target{target}) {
		if r.Check == check {
			return r
		}
	}
	return conformance.Result{}
}

// forgeSource returns out with the source of actor's param in the installed manifest replaced.
func forgeSource(t *testing.T, out substrates.Output, actor, param, source string) substrates.Output {
	t.Helper()
	return forgeInstalled(t, out, actor, func(a map[string]any) bool {
		for _, p := range a["params"].([]any) {
			if p := p.(map[string]any); p["name"] == param {
				p["source"] = source
				return true
			}
		}
		return false
	})
}

// forgeManifest returns out with actor's capabilities in the installed manifest replaced by caps.
func forgeManifest(t *testing.T, out substrates.Output, actor string, caps []string) substrates.Output {
	t.Helper()
	return forgeInstalled(t, out, actor, func(a map[string]any) bool {
		a["capabilities"] = caps
		return true
	})
}

// forgeInstalled returns out with actor in the installed manifest changed by edit, which reports
// whether it changed anything.
func forgeInstalled(t *testing.T, out substrates.Output, actor string, edit func(map[string]any) bool) substrates.Output {
	t.Helper()
	const path = ".autonomy/gh-actions/manifest.json"
	forged := substrates.Output{Target: out.Target, Files: slices.Clone(out.Files)}
	i := slices.IndexFunc(forged.Files, func(f substrates.File) bool { return f.Path == path })
	if i < 0 {
		t.Fatalf("no %s", path)
	}
	var m map[string]any
	if err := json.Unmarshal(forged.Files[i].Data, &m); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range m["actors"].([]any) {
		if a := a.(map[string]any); a["name"] == actor {
			found = edit(a)
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil || !found {
		t.Fatalf("no actor %s in %s (%v)", actor, path, err)
	}
	forged.Files[i].Data = data
	return forged
}

// TestGitHubScopeRefused: on GitHub a session's launch lands through its run's trusted apply job
// (autonomy gh apply, run as a process with the job's command and env from the workflow, against
// the simulated API). The scope check observes the skill launcher's in-scope launch land, and its
// out-of-scope launch and the probe's (no agent:launch) refused by the apply job, starting
// nothing. An installation whose manifest drops the scope or grants the probe agent:launch, a
// launcher whose workflow has no apply job, or an apply job that fails instead of refusing fails it.
func TestGitHubScopeRefused(t *testing.T) {
	_, opts, out := fakeGitHub(t)
	exe := testbin.Path(t)
	r := scopeOn(opts, out, exe)
	if r.Outcome != conformance.Supported || !strings.Contains(r.Observed, "may not act on \\\"overtime\\\": its agent:launch is scoped to probe") ||
		!strings.Contains(r.Observed, "needs the capability agent:launch, which actor \\\"probe\\\" does not hold") {
		t.Errorf("as compiled: scope-refused %s %s, observed %s", r.Outcome, r.Reason, r.Observed)
	}
	for name, c := range map[string]struct {
		out  substrates.Output
		want string
	}{
		"scope dropped":             {forgeManifest(t, out, "delegator", []string{"agent:launch"}), "launching overtime was not refused"},
		"probe may launch":          {forgeManifest(t, out, "probe", []string{"agent:launch"}), "(no agent:launch) launching probe was not refused"},
		"no launch for the skill":   {forgeManifest(t, out, "delegator", []string{}), "launching probe, within its scope"},
		"the launcher has no apply": {forge(t, out, "delegator", "name: autonomy gh apply", "name: apply"), "delegator.yml has no apply job running autonomy gh apply"},
		// An apply job that fails is no refusal: nothing was checked.
		"the probe's apply breaks": {forge(t, out, "probe", `"$AUTONOMY_BIN" gh apply`, `"$AUTONOMY_BIN" gh nosuch`), "(no agent:launch) launching probe was not tried, so not seen refused"},
	} {
		r := scopeOn(opts, c.out, exe)
		if r.Outcome != conformance.Fail || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%s: scope-refused %s %q, want fail saying %q", name, r.Outcome, r.Reason, c.want)
		}
	}
}

// TestGitHubSessionSources: on GitHub a session's launch is dispatched by its run's apply job with
// the job's GITHUB_TOKEN, which GitHub records as github-actions[bot]. The session-sources check
// observes, from a session of the skill launcher, the apply job refuse a launch setting
// PROBE_ROLE or PROBE_ACTOR or naming who fired it, starting nothing, and the probe's job env,
// evaluated from probe.yml as compiled for the run GitHub reports, give its plain launch the
// calling actor and NONE. A workflow that takes subject.actor from github.actor alone (the bot)
// or gives a bot a role, a manifest that lets the agent's PROBE_ROLE through, a job token that
// dispatches as the operator, or a broken apply job fails it; without a job token it is not
// probed, saying how to give one.
func TestGitHubSessionSources(t *testing.T) {
	_, opts, out := fakeGitHub(t)
	exe := testbin.Path(t)
	r := appliedCheck(opts, out, exe, jobToken, "session-sources")
	t.Logf("as compiled: %s", r.Observed)
	if r.Outcome != conformance.Supported || !strings.Contains(r.Observed, "PROBE_ACTOR=delegator (subject.actor) and PROBE_ROLE=NONE") ||
		!strings.Contains(r.Observed, "bound to subject.actorRole, which the substrate sets") || !strings.Contains(r.Observed, `unknown field \"from\"`) {
		t.Errorf("as compiled: session-sources %s %s, observed %s", r.Outcome, r.Reason, r.Observed)
	}
	actorEnv := "PROBE_ACTOR: ${{ github.actor == 'github-actions[bot]' && inputs.PROBE_ACTOR || github.actor }}"
	roleEnv := "PROBE_ROLE: ${{ endsWith(github.actor, '[bot]') && 'NONE' || github.actor == github.repository_owner && 'OWNER' || 'COLLABORATOR' }}"
	for name, c := range map[string]struct {
		out   substrates.Output
		token string
		want  string
	}{
		"actor is who dispatched":   {forge(t, out, "probe", actorEnv, "PROBE_ACTOR: ${{ github.actor }}"), jobToken, `PROBE_ACTOR="github-actions[bot]", want "delegator"`},
		"a bot is a collaborator":   {forge(t, out, "probe", roleEnv, "PROBE_ROLE: ${{ github.actor == github.repository_owner && 'OWNER' || 'COLLABORATOR' }}"), jobToken, `PROBE_ROLE="COLLABORATOR", want "NONE"`},
		"the role is a plain param": {forgeSource(t, out, "probe", "PROBE_ROLE", "subject.text"), jobToken, "setting PROBE_ROLE (subject.actorRole) to OWNER was not refused"},
		"the job acts as the owner": {out, opts.Token, `PROBE_ACTOR="o", want "delegator"`},
		"the apply job breaks":      {forge(t, out, "delegator", `"$AUTONOMY_BIN" gh apply`, `"$AUTONOMY_BIN" gh nosuch`), jobToken, "was not tried, so not seen refused"},
	} {
		r := appliedCheck(opts, c.out, exe, c.token, "session-sources")
		if r.Outcome != conformance.Fail || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%s: session-sources %s %q, want fail saying %q", name, r.Outcome, r.Reason, c.want)
		}
	}
	if r := appliedCheck(opts, out, exe, "", "session-sources"); r.Outcome != conformance.NotProbed || !strings.Contains(r.Reason, ghactions.JobTokenEnv) {
		t.Errorf("without a job token: session-sources %s %q, want not probed naming %s", r.Outcome, r.Reason, ghactions.JobTokenEnv)
	}
}
