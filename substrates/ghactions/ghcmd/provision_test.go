package ghcmd

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// The registry tells ir the targets a profile may declare; this package's tests, which the
// registry imports, register this substrate themselves.
func init() { ir.RegisterTarget(substrates.Declaration(Substrate{})) }

// TestProvisionPolicy: what provision sets up comes from the profile: the required checks and
// the model proxy's variables from policy.box.gh-actions (compile's decoder), the task states,
// the maintainers' variable and the human gate from the rest of the box.
func TestProvisionPolicy(t *testing.T) {
	dir := t.TempDir()
	yml := `schema: autonomy.ir.v1
targets: [gh-actions]
actors:
  a:
    behavior: skills/a
    triggers: [{ dispatch: true }]
policy:
  box:
    taskStates: { ready: todo }
    human: { maintainers_var: MAINTAINERS }
    risk: { human_required_paths: [".github/**"] }
    gh-actions: { requiredChecks: [ci], proxy_host: proxy.example, oidc_audience: aud }
`
	for name, data := range map[string]string{"ir.yml": yml, "skills/a/SKILL.md": "# a\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	pol, err := provisionPolicy(p)
	if err != nil {
		t.Fatal(err)
	}
	wantVars := [][2]string{{"AUTONOMY_PAUSED", "false"}, {ghactions.ProxyHostVar, "proxy.example"}, {ghactions.OIDCAudienceVar, "aud"}}
	if !reflect.DeepEqual(pol.RequiredChecks, []string{"ci"}) || !reflect.DeepEqual(pol.Variables, wantVars) ||
		pol.TaskStates["ready"] != "todo" || pol.MaintainersVar != "MAINTAINERS" || !pol.HumanGate {
		t.Errorf("provisionPolicy = %+v", pol)
	}
}

// checkedProfile writes yml (and the skill it runs) into dir and checks it.
func checkedProfile(t *testing.T, dir, yml string) *ir.Profile {
	t.Helper()
	for name, data := range map[string]string{"ir.yml": yml, "skills/a/SKILL.md": "# a\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	return p
}

// TestProvisionGovernedOnly: a profile whose only gated paths are its governing documents (no
// policy.box.risk.human_required_paths) still gets the human gate.
func TestProvisionGovernedOnly(t *testing.T) {
	dir := t.TempDir()
	yml := `schema: autonomy.ir.v1
targets: [gh-actions]
documents:
  roles: { vision: docs/VISION.md }
actors:
  a:
    behavior: skills/a
    triggers: [{ dispatch: true }]
`
	pol, err := provisionPolicy(checkedProfile(t, dir, yml))
	if err != nil || !pol.HumanGate {
		t.Fatalf("provisionPolicy = %+v, %v: no human gate for a governing document", pol, err)
	}
}

// TestProvisionReviewerAsksForPerson: a profile with no human-required path whose reviewer's
// result may ask for a person (open-autonomy.review.v1's humanApprovalRequired, or an inline
// schema naming it) requires human-approval, which the review job holds pending for a person;
// one whose reviewer cannot ask does not.
func TestProvisionReviewerAsksForPerson(t *testing.T) {
	for schema, want := range map[string]bool{
		"open-autonomy.review.v1": true,
		`{ type: object, properties: { verdict: { type: string }, humanApprovalRequired: { type: boolean } } }`: true,
		"autonomy.review.v1": false,
	} {
		yml := `schema: autonomy.ir.v1
targets: [gh-actions]
actors:
  a:
    behavior: skills/a
    capabilities: [code:propose]
    review: r
    triggers: [{ dispatch: true }]
  r:
    behavior: skills/a
    capabilities: [code:review]
    triggers: [{ dispatch: true }]
    result: { schema: ` + schema + ` }
`
		pol, err := provisionPolicy(checkedProfile(t, t.TempDir(), yml))
		if err != nil || pol.HumanGate != want {
			t.Errorf("reviewer result %s: HumanGate = %v (%v), want %v", schema, pol.HumanGate, err, want)
		}
	}
}
