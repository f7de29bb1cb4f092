package ghrun_test

import (
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// The registry tells ir the targets a profile may declare; this package's tests compile the
// bundled profiles, which declare gh-actions and local, so they declare both themselves.
func init() {
	ir.RegisterTarget(substrates.Declaration(ghactions.Substrate{}))
	ir.RegisterTarget(substrates.Declaration(local.Substrate{}))
	ir.RegisterTarget(ir.Target{Name: "kubernetes", Aliases: []string{"k8s"}}) // bundled profiles declare it too (hello)
}
