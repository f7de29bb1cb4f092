package playbook

import (
	"fmt"
	"path"
	"path/filepath"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/capsule"
)

// Verification says, for each method a capsule playbook's ## Verification declares, when a
// session of an actor whose behavior it is may become done, and what the profile must provide
// for that; the two methods no substrate can carry out are refused.
var Verification = []struct {
	Method, Done, Needs string
	Refused             bool
}{
	{"self-attestation", "on the agent's own success", "", false},
	{"peer-review", "only after the actor's review: reviewer approves", "a review: reviewer on the actor", false},
	{"human-sign-off", "only through the human seam's token", "", false},
	{"automated-check", "only with a result that passes the actor's result contract", "a result.schema on the actor", false},
	{"cold-boot-test", "", "three independent cold-boot agents executing and checking the outcomes: no substrate runs that", true},
	{"external-audit", "", "a third party's validation: no substrate can obtain it", true},
}

// checkVerification checks each actor whose behavior is a capsule playbook against its
// verification method: refused methods are errors, and so is a method whose requirement the actor
// lacks. Diagnostics point at the actor's behavior in the profile.
func checkVerification(p *ir.Profile, caps []*capsule.Playbook) ir.Diagnostics {
	if len(caps) == 0 {
		return nil
	}
	byFile := map[string]*capsule.Playbook{}
	for _, c := range caps {
		byFile[filepath.Clean(c.File)] = c
	}
	var diags ir.Diagnostics
	for _, a := range p.Actors {
		c := byFile[filepath.Clean(filepath.Join(p.Dir, filepath.FromSlash(a.BehaviorFile)))]
		if c != nil {
			c, _ = capsule.Successor(caps, c) // a new run follows a superseded playbook's successor
		}
		if c == nil || c.Verification.Value == "" || path.Base(a.BehaviorFile) == ir.SkillFile {
			continue
		}
		method := c.Verification.Value
		bad := func(msg, hint string) {
			diags = append(diags, ir.Diagnostic{File: p.File, Pos: a.Behavior.Pos, Severity: ir.Error,
				Message: fmt.Sprintf("actor %q: %s declares verification %s (%s:%d): %s", a.Name.Value, a.BehaviorFile, method, c.File, c.Verification.Pos.Line, msg), Hint: hint})
		}
		for _, v := range Verification {
			switch {
			case v.Method != method:
			case v.Refused:
				bad("refused: it needs "+v.Needs, "choose a method a runner can prove: self-attestation, peer-review, human-sign-off or automated-check")
			case method == "peer-review" && a.Review.Value == "":
				bad("the session is done only after a reviewer approves, and the actor names none", "add review: REVIEWER (an actor holding code:review)")
			case method == "automated-check" && a.Result == nil:
				bad("the session is done only with a result that passes a contract, and the actor declares none", "add result: { schema: … }")
			}
		}
	}
	return diags
}
