//go:build unix

package local

import (
	"context"
	"strings"
	"testing"
)

// doctor flags the quickstart's placeholder key without the scripted model's URL (model.env
// exported before dev model wrote it): sessions would send it to the provider itself and retry
// until cancelled. With the URL, or with a key of one's own, the credential is fine.
func TestDoctorFlagsThePlaceholderKeyWithoutItsModel(t *testing.T) {
	dir := installFleet(t, handsFleet("codex"), false)
	for _, c := range []struct {
		env  []string
		ok   bool
		want string
	}{
		{[]string{"OPENAI_API_KEY=trial"}, false, "OPENAI_API_KEY=trial is the scripted model's placeholder, and OPENAI_BASE_URL is unset"},
		{[]string{"OPENAI_API_KEY=trial", "OPENAI_BASE_URL=http://127.0.0.1:4000/v1"}, true, "the model proxy is OPENAI_BASE_URL=http://127.0.0.1:4000/v1"},
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
