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
	target := conformance.Target{Name: "github", Substrate: ghactions.Name, New: func(ctx context.Context) (*conformance.Subject, error) {
		s, err := ghactions.ProbeSubject(opts, false, out)
		if err == nil {
			err = ghactions.ProbeApply(s, opts, out, exe)
		}
		return s, err
	}}
	for _, r := range conformance.Run(context.Background(), []conformance.Target{target}) {
		if r.Check == "scope-refused" {
			return r
		}
	}
	return conformance.Result{}
}

// forgeManifest returns out with actor's capabilities in the installed manifest replaced by caps.
func forgeManifest(t *testing.T, out substrates.Output, actor string, caps []string) substrates.Output {
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
			a["capabilities"], found = caps, true
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
