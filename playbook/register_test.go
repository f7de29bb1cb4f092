package playbook

import "github.com/autonomyhq/autonomy/ir"

// The registry tells ir the targets a profile may declare; playbook sits below the substrates, so
// its tests declare the two the bundled profiles name, and fake, as plain targets.
func init() {
	ir.RegisterTarget(ir.Target{Name: "gh-actions", Aliases: []string{"github"}})
	ir.RegisterTarget(ir.Target{Name: "local"})
	ir.RegisterTarget(ir.Target{Name: "kubernetes", Aliases: []string{"k8s"}}) // bundled profiles declare it too (hello)
	ir.RegisterTarget(ir.Target{Name: "fake"})                                 // the tests' own profiles declare a target of no substrate
}
