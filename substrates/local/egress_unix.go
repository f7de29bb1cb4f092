//go:build unix

package local

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/egress"
)

// confine wraps a preset's argv so that the agent, and everything it runs, has a network of
// its own (egress.Jail) in which only the session's model proxy and, with network on (the
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
	for _, h := range egress.Helpers {
		if _, err := exec.LookPath(h); err != nil {
			return nil, unconfine, fmt.Errorf("the agent's network sandbox needs %s on PATH: install bubblewrap and socat (apt-get install bubblewrap socat)", h)
		}
	}
	pol := sv.cfg.Egress
	if pol == nil {
		pol = &EgressPolicy{}
	}
	ports := []int{portOf(sv.proxy.root)}
	stopEgress := func() {}
	if !pol.Off {
		addr, stop, err := sv.startEgress(ctx, pol)
		if err != nil {
			return nil, unconfine, err
		}
		stopEgress = stop
		ports = append(ports, portOf("http://"+addr))
		sv.env = withEnv(sv.env, proxyEnv("http://"+addr)...)
	}
	jail, err := egress.NewJail(ports...)
	if err != nil {
		stopEgress()
		return nil, unconfine, fmt.Errorf("cannot make the agent's network sandbox: %v", err)
	}
	return jail.Wrap(argv), func() { _ = jail.Close(); stopEgress() }, nil
}

// proxyEnv points every client that honors the usual variables at the egress proxy, but for
// loopback: the model proxy is reached directly.
func proxyEnv(proxy string) []string {
	var out []string
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"} {
		out = append(out, k+"="+proxy, strings.ToLower(k)+"="+proxy)
	}
	return append(out, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1")
}

// startEgress starts the session's egress proxy on a free loopback port, its decisions logged
// beside the session's transcript.
func (sv *supervision) startEgress(ctx context.Context, pol *EgressPolicy) (string, func(), error) {
	rules, err := pol.egressRules()
	if err != nil {
		return "", nil, fmt.Errorf("policy.box.local.egress.allow: %v (compile again)", err)
	}
	path, ok := sv.r.In.TranscriptPath(sv.s.ID)
	if !ok {
		return "", nil, fmt.Errorf("%q is not a session id", sv.s.ID)
	}
	f, err := createNew(strings.TrimSuffix(path, ".jsonl")+EgressLogSuffix, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("cannot create its egress log: %v", err)
	}
	// Locally a private address a rule names literally is the operator's own choice; a name
	// never reaches one.
	cfg := egress.Config{Allow: rules, Log: f, What: "policy.box.local.egress.allow", AllowPrivateLiterals: true}
	if sv.r.egressTest != nil {
		sv.r.egressTest(&cfg)
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	addr, done, err := egress.Listen(pctx, egress.New(cfg), "127.0.0.1:0")
	if err != nil {
		cancel()
		f.Close()
		return "", nil, fmt.Errorf("cannot start its egress proxy: %v", err)
	}
	return addr, func() { cancel(); <-done; f.Close() }, nil
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
