package local

import (
	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/substrates"
)

// EgressPolicy is what a proxied session (a preset's, an explicit agent command's) reaches besides the model proxy
// (policy.box.local.network and egress.allow; docs/local.md "Egress"). nil is the default:
// network on, no host allowed, so only the model proxy.
type EgressPolicy struct {
	// Allow are the hosts the egress proxy admits, as written (egress.ParseRule).
	Allow []string `json:"allow,omitempty"`
	// Off is network: false: no egress proxy at all, and the agent's own sandbox keeps its
	// commands off even loopback.
	Off bool `json:"off,omitempty"`
}

// EgressLogSuffix ends the file beside a session's transcript that holds the egress proxy's
// decisions, one JSON line each (egress.Decision).
const EgressLogSuffix = ".egress.jsonl"

// checkEgress refuses an allowlist network: false contradicts. A preset's agent and an explicit
// agent command alike honor it: each runs in the same network sandbox (egress_unix.go).
func checkEgress(r *substrates.BoxReader, b *box) {
	if len(b.egress) > 0 && !b.network {
		r.Errorf(b.egressKey, "remove network: false to let the agent reach these hosts, or remove egress",
			"egress.allow lists hosts, but network: false keeps the agent off every host but the model proxy")
	}
}

// egressPolicy is what an actor's config records of the box: nil for the default.
func (b *box) egressPolicy() *EgressPolicy {
	if b.network && len(b.egress) == 0 {
		return nil
	}
	return &EgressPolicy{Allow: substrates.EgressStrings(b.egress), Off: !b.network}
}

// egressRules parses what a config recorded (compile validated it).
func (p *EgressPolicy) egressRules() ([]egress.Rule, error) {
	var out []egress.Rule
	for _, s := range p.Allow {
		r, err := egress.ParseRule(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
