package local

import (
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The registry tells ir the targets a profile may declare; this package's tests, which the
// registry imports, register this substrate themselves.
func init() {
	ir.RegisterTarget(substrates.Declaration(Substrate{}))
}
