//go:build unix

package egress

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Sandbox is a Jail with the egress proxy beside it, outside: what a substrate runs an agent in.
type Sandbox struct {
	jail *Jail
	// Env points the agent's clients at the egress proxy (empty without one); the caller adds it
	// to the agent's environment.
	Env  []string
	stop func()
}

// Open checks the jail's helpers are on PATH, starts the egress proxy with cfg on a free port of
// 127.0.0.1 (no egress proxy when cfg is nil: nothing but the model proxy), and a Jail bridging
// ports (the model proxy's) and the egress proxy's. Close it once the agent is gone.
func Open(ctx context.Context, cfg *Config, ports ...int) (*Sandbox, error) {
	for _, h := range Helpers {
		if _, err := exec.LookPath(h); err != nil {
			return nil, fmt.Errorf("the agent's network sandbox needs %s on PATH: install bubblewrap and socat (apt-get install bubblewrap socat)", h)
		}
	}
	s := &Sandbox{stop: func() {}}
	ports = slices.Clone(ports)
	if cfg != nil {
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		addr, done, err := Listen(pctx, New(*cfg), "127.0.0.1:0")
		if err != nil {
			cancel()
			return nil, err
		}
		s.stop = func() { cancel(); <-done }
		_, p, _ := strings.Cut(addr, ":")
		n, _ := strconv.Atoi(p)
		ports = append(ports, n)
		s.Env = ProxyEnv("http://" + addr)
	}
	j, err := NewJail(ports...)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("cannot make the agent's network sandbox: %v", err)
	}
	s.jail = j
	return s, nil
}

// Wrap is argv run inside the sandbox.
func (s *Sandbox) Wrap(argv []string) []string { return s.jail.Wrap(argv) }

// WrapIn is argv run inside the sandbox, confined by c.
func (s *Sandbox) WrapIn(c *Confinement, argv []string) []string { return s.jail.WrapIn(c, argv) }

// Close ends the bridges, every connection through them, and the egress proxy.
func (s *Sandbox) Close() {
	_ = s.jail.Close()
	s.stop()
}

// ProxyEnv points every client that honors the usual variables at the egress proxy, but for
// loopback: the model proxy is reached directly.
func ProxyEnv(proxy string) []string {
	var out []string
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"} {
		out = append(out, k+"="+proxy, strings.ToLower(k)+"="+proxy)
	}
	return append(out, "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1")
}
