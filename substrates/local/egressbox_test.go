package local

import (
	"reflect"
	"strings"
	"testing"
)

func TestBoxEgress(t *testing.T) {
	t.Parallel()
	b, diags := readBox(writeBoxProfile(t, `{ egress: { allow: [registry.npmjs.org, "*.PythonHosted.org", "proxy.example.com:8443", 203.0.113.7] } }`))
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %s", diags)
	}
	want := &EgressPolicy{Allow: []string{"registry.npmjs.org", "*.pythonhosted.org", "proxy.example.com:8443", "203.0.113.7"}}
	if got := b.egressPolicy(); !reflect.DeepEqual(got, want) {
		t.Errorf("egress policy %+v, want %+v", got, want)
	}
	if b, _ := readBox(writeBoxProfile(t, "{ overlap: false }")); b.egressPolicy() != nil {
		t.Errorf("the default box records an egress policy: %+v", b.egressPolicy())
	}
	if b, _ := readBox(writeBoxProfile(t, "{ network: false }")); !reflect.DeepEqual(b.egressPolicy(), &EgressPolicy{Off: true}) {
		t.Errorf("network: false gives %+v", b.egressPolicy())
	}
	// Your own agent command honors egress as a preset does: no warning, the same policy.
	b, diags = readBox(writeBoxProfile(t, `{ agent: [my-agent], egress: { allow: [registry.npmjs.org] } }`))
	if len(diags) != 0 || !reflect.DeepEqual(b.egressPolicy(), &EgressPolicy{Allow: []string{"registry.npmjs.org"}}) {
		t.Errorf("an agent command's egress: %+v\n%s", b.egressPolicy(), diags)
	}
	// Line 9 of the profile is "    local: <box>": column 12 is where the box starts.
	for box, want := range map[string]string{
		`{ egress: { allow: ["https://registry.npmjs.org"] } }`:       `ir.yml:9:32: policy.box.local.egress.allow: "https://registry.npmjs.org" names a scheme: give the host alone, e.g. "registry.npmjs.org"`,
		`{ egress: { allow: ["*"] } }`:                                `ir.yml:9:32: policy.box.local.egress.allow: "*": a wildcard is a leading *.`,
		`{ egress: { allow: [example.com/x] } }`:                      `ir.yml:9:32: policy.box.local.egress.allow: "example.com/x" is not a host`,
		`{ egress: { allow: [example.com, 443] } }`:                   `ir.yml:9:45: policy.box.local.egress.allow: each entry is a host name`,
		`{ egress: { allow: registry.npmjs.org } }`:                   `ir.yml:9:31: policy.box.local.egress.allow must be a list of hosts`,
		`{ egress: { deny: [example.com] } }`:                         `ir.yml:9:24: policy.box.local.egress.deny is not an egress setting`,
		`{ egress: [example.com] }`:                                   `ir.yml:9:22: policy.box.local.egress must be a mapping`,
		`{ network: false, egress: { allow: [registry.npmjs.org] } }`: `ir.yml:9:30: policy.box.local.egress.allow lists hosts, but network: false keeps the agent off every host but the model proxy`,
	} {
		_, diags := readBox(writeBoxProfile(t, box))
		if !strings.Contains(diags.String(), want) {
			t.Errorf("%s:\n%s\nwant %s", box, diags, want)
		}
	}
}
