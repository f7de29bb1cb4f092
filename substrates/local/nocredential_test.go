package local

import (
	"strings"
	"testing"
)

// TestLaunchWarnsWithoutAModelCredential: an agent whose sessions would run without a model proxy
// (no credential its CLI speaks in the environment) is named at launch, with the fix; with the
// credential, for a script actor, or with the agent overridden (AUTONOMY_AGENT) nothing is said.
func TestLaunchWarnsWithoutAModelCredential(t *testing.T) {
	dir := installFleet(t, skillFleet("codex"), true)
	for _, tc := range []struct {
		env   []string
		actor string
		want  string
	}{
		{[]string{"PATH=/usr/bin:/bin"}, "develop", "no OPENAI_API_KEY in this environment: develop's session runs its agent CLI with the CLI's own login"},
		{[]string{"PATH=/usr/bin:/bin", "OPENAI_API_KEY="}, "reviewer", "no OPENAI_API_KEY in this environment"},
		{[]string{"PATH=/usr/bin:/bin", "OPENAI_API_KEY=k"}, "develop", ""},
		{[]string{"PATH=/usr/bin:/bin", AgentEnv + "=my-agent --flag"}, "develop", ""},
		{[]string{"PATH=/usr/bin:/bin"}, "nobody", ""},
	} {
		got := newRunner(t, dir, Options{Env: tc.env}).NoModelCredential(tc.actor)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("env %v, actor %s: %q, want %q", tc.env, tc.actor, got, tc.want)
		}
	}
	script := installFleet(t, fleet{yml: "schema: autonomy.ir.v1\ntargets: [local]\nactors:\n  sweep:\n    behavior: scripts/sweep.sh\n    triggers: [{ dispatch: true }]\n",
		files: map[string]string{"scripts/sweep.sh": "#!/bin/sh\n"}}, true)
	if got := newRunner(t, script, Options{Env: []string{"PATH=/usr/bin:/bin"}}).NoModelCredential("sweep"); got != "" {
		t.Errorf("a script actor: %q, want nothing", got)
	}
}
