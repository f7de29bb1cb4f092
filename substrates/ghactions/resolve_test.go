package ghactions

import (
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook"
)

// resolve is what the callers above the substrate do before compiling: resolve the profile once
// (playbook.Resolve). Its diagnostics are validate's to report; a test of the compile reads the
// compile's own.
func resolve(p *ir.Profile) *resolved.Profile {
	r, _ := playbook.Resolve(p)
	return r
}
