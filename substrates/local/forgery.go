package local

import (
	"context"
	"fmt"
	"strings"
)

// gatingSources are the param sources fit for gating privileged commands: who fired the session
// and their role. Only the substrate sets them.
var gatingSources = map[string]bool{"subject.actor": true, "subject.actorRole": true}

// refuseForgery refuses a launch from a session that tries to set who fired it: a --param bound
// to subject.actor or subject.actorRole, or a --from naming another actor than the caller's.
// From a session those params are the calling actor and NONE, whatever it asks; the operator's
// shell may set them (it is the owner of the installation).
func (r *Runner) refuseForgery(ctx context.Context, cfg *ActorConfig, req LaunchRequest) error {
	if r.caller == nil {
		return nil
	}
	var forged []string
	for _, p := range cfg.Params {
		if _, set := req.Params[p.Name]; set && gatingSources[p.Source] {
			forged = append(forged, fmt.Sprintf("--param %s (bound to %s)", p.Name, p.Source))
		}
	}
	if req.From != "" && req.From != r.caller.session.Actor {
		forged = append(forged, fmt.Sprintf("--from %s", req.From))
	}
	if len(forged) == 0 {
		return nil
	}
	return r.caller.deny(ctx, fmt.Sprintf("%s may not set %s: from a session, subject.actor is the calling actor (%s) and subject.actorRole is NONE; only the operator's shell sets them (drop the flag)",
		r.caller.describe(), strings.Join(forged, ", "), r.caller.session.Actor))
}
