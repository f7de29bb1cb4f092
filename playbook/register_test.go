package playbook

import "github.com/autonomyhq/autonomy/ir"

// The registry tells ir the targets a profile may declare; this package's tests, below every
// substrate, declare the test-only target fake.
func init() {
	ir.RegisterTarget(ir.Target{Name: "fake"})
}
