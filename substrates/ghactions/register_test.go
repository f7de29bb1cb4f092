package ghactions

import (
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// The registry tells ir the targets a profile may declare; this package's tests, which the
// registry imports, do it themselves: this substrate, and local, which the bundled profiles
// also declare.
func init() {
	ir.RegisterTarget(substrates.Declaration(Substrate{}))
	ir.RegisterTarget(substrates.Declaration(local.Substrate{}))
	ir.RegisterTarget(ir.Target{Name: "kubernetes", Aliases: []string{"k8s"}}) // bundled profiles declare it too (hello)
}
