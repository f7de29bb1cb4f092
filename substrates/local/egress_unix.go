//go:build unix

package local

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/egress"
)

// confine wraps a proxied session's argv (a preset's, an explicit agent command's, a step
// playbook's run and so every step's agent) so that the agent, and everything it runs, has a
// network of its own (egress.Jail) in which only the session's model proxy and, with network on (the
// default), the egress proxy admitting policy.box.local.egress.allow are reachable, at the
// addresses its environment names. unconfine ends the bridges and the egress proxy once the agent
// is gone. Without a model proxy (the CLI uses its own login and must reach its provider) the
// agent is not confined: startProxy's log line says so.
func (sv *supervision) confine(ctx context.Context, argv []string) (out []string, unconfine func(), err error) {
	unconfine = func() {}
	if sv.proxy == nil {
		return argv, unconfine, nil
	}
	if runtime.GOOS != "linux" {
		fmt.Fprintf(sv.logf, "autonomy: %s has no network namespaces: the agent's network is what its own sandbox allows (docs/local.md#egress)\n", runtime.GOOS)
		return argv, unconfine, nil
	}
	pol := sv.cfg.Egress
	if pol == nil {
		pol = &EgressPolicy{}
	}
	var cfg *egress.Config
	closeLog := func() {}
	if !pol.Off {
		if cfg, closeLog, err = sv.egressConfig(pol); err != nil {
			return nil, unconfine, err
		}
	}
	sb, err := egress.Open(ctx, cfg, portOf(sv.proxy.root))
	if err != nil {
		closeLog()
		return nil, unconfine, err
	}
	sv.env = withEnv(sv.env, sb.Env...)
	return sb.Wrap(argv), func() { sb.Close(); closeLog() }, nil
}

// egressConfig is the session's egress proxy: what it admits, its decisions logged beside the
// session's transcript; closeLog closes that log once the proxy is stopped.
func (sv *supervision) egressConfig(pol *EgressPolicy) (*egress.Config, func(), error) {
	rules, err := pol.egressRules()
	if err != nil {
		return nil, nil, fmt.Errorf("policy.box.local.egress.allow: %v (compile again)", err)
	}
	path, ok := sv.r.In.TranscriptPath(sv.s.ID)
	if !ok {
		return nil, nil, fmt.Errorf("%q is not a session id", sv.s.ID)
	}
	if err := os.MkdirAll(sv.r.In.Path(TranscriptDir), 0o700); err != nil {
		return nil, nil, fmt.Errorf("cannot make the transcript folder: %v", err)
	}
	f, err := createNew(strings.TrimSuffix(path, ".jsonl")+EgressLogSuffix, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot create its egress log: %v", err)
	}
	// Locally a private address a rule names literally is the operator's own choice; a name
	// never reaches one.
	cfg := &egress.Config{Allow: rules, Log: f, What: "policy.box.local.egress.allow", AllowPrivateLiterals: true}
	if sv.r.egressTest != nil {
		sv.r.egressTest(cfg)
	}
	return cfg, func() { f.Close() }, nil
}

// portOf is the port of a loopback URL the runner made.
func portOf(u string) int {
	parsed, err := url.Parse(u)
	if err != nil {
		return 0
	}
	_, p, _ := net.SplitHostPort(parsed.Host)
	n, _ := strconv.Atoi(p)
	return n
}
