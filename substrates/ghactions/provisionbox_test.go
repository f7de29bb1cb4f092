package ghactions

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestReadProvisionBox: provision reads policy.box.gh-actions (or its github spelling) through
// compile's decoder: the required checks and the model proxy's host and audience; a value
// compile refuses is refused the same, positioned.
func TestReadProvisionBox(t *testing.T) {
	load := func(box string) *ir.Profile {
		t.Helper()
		p, diags, err := ir.Check(profile(t, "schema: autonomy.ir.v1\ntargets: [gh-actions]\nactors:\n  a:\n    behavior: skills/a\n    triggers: [{ dispatch: true }]\npolicy:\n  box:\n    "+box+"\n"))
		if err != nil || diags.HasErrors() {
			t.Fatalf("%v %s", err, diags)
		}
		return p
	}
	want := ProvisionBox{RequiredChecks: []string{"ci", "lint"}, ProxyHost: "proxy.example:8443", OIDCAudience: "model-proxy"}
	for _, key := range []string{"gh-actions", "github"} {
		got, err := ReadProvisionBox(load(key + ": { requiredChecks: [ci, lint], proxy_host: proxy.example:8443, oidc_audience: model-proxy }"))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("policy.box.%s: %+v, %v; want %+v", key, got, err, want)
		}
	}
	if got, err := ReadProvisionBox(load("tracker: {}")); err != nil || !reflect.DeepEqual(got, ProvisionBox{}) {
		t.Errorf("no policy.box.gh-actions: %+v, %v", got, err)
	}
	_, err := ReadProvisionBox(load(`gh-actions: { proxy_host: "https://proxy.example" }`))
	var diags ir.Diagnostics
	if !errors.As(err, &diags) || !strings.Contains(err.Error(), `ir.yml:9:31: policy.box.gh-actions.proxy_host "https://proxy.example" is not a host name`) {
		t.Errorf("a bad proxy_host: %v", err)
	}
}
