package ghactions

import "github.com/autonomyhq/autonomy/ir"

// ProvisionBox is what `autonomy provision` reads of policy.box.gh-actions (or its github
// spelling), decoded by the reader compile uses: the status checks branch protection requires
// besides agent-review, and the model proxy's host and OIDC audience, which provision writes
// into the repository variables ProxyHostVar and OIDCAudienceVar.
type ProvisionBox struct {
	RequiredChecks []string
	ProxyHost      string
	OIDCAudience   string
}

// ReadProvisionBox decodes p's policy.box.gh-actions; its errors are compile's, positioned (an
// ir.Diagnostics).
func ReadProvisionBox(p *ir.Profile) (ProvisionBox, error) {
	b, diags := readBox(p)
	if diags.HasErrors() {
		return ProvisionBox{}, diags
	}
	return ProvisionBox{RequiredChecks: b.requiredChecks, ProxyHost: b.ref.proxyHost, OIDCAudience: b.ref.audience}, nil
}
