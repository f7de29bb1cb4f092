package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of what one client can make the proxy hold.
const (
	MaxHeaderBytes    = 16 << 10
	HeaderTimeout     = 10 * time.Second
	DialTimeout       = 10 * time.Second
	ResolveTimeout    = 10 * time.Second
	DefaultMaxTunnels = 64
	// DefaultMaxLog bounds the decision log: an agent that floods the proxy cannot fill the disk.
	DefaultMaxLog = 8 << 20
)

// Config is what a Proxy admits.
type Config struct {
	// Allow is the allowlist; empty admits nothing.
	Allow []Rule
	// AllowPrivateLiterals admits a private IP literal a rule names exactly (private_egress_guard
	// off). A name never reaches a private address.
	AllowPrivateLiterals bool
	// Log receives one JSON line per decision (Decision); nil discards them. Past MaxLog bytes
	// (DefaultMaxLog when 0) one last line says the log is full and the rest are dropped.
	Log    io.Writer
	MaxLog int64
	// What names it the allowlist in refusals, e.g. "policy.box.local.egress.allow".
	What string
	// MaxTunnels bounds the tunnels open at once (DefaultMaxTunnels when 0).
	MaxTunnels int

	// Resolve resolves a host name (net.DefaultResolver when nil).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// TestPermit is for tests only, and no profile key, flag or variable sets it: addresses
	// admitted for an allowed name although Private (a test's server on loopback).
	TestPermit []netip.Prefix
}

// Decision is one line of the proxy's log.
type Decision struct {
	Time    time.Time `json:"time"`
	Method  string    `json:"method"`
	Target  string    `json:"target"`
	Addr    string    `json:"addr,omitempty"`
	Allowed bool      `json:"allowed"`
	Reason  string    `json:"reason,omitempty"`
}

// Proxy is the allowlisting CONNECT proxy; it is an http.Handler, served by Listen.
type Proxy struct {
	cfg   Config
	slots chan struct{}
	logMu sync.Mutex
	// logged is what Log has been written; full is set once it reached MaxLog.
	logged int64
	full   bool
	// tunnels are the connections of the tunnels open, closed when the proxy stops.
	tunnels conns
}

// New makes a proxy admitting what cfg allows.
func New(cfg Config) *Proxy {
	if cfg.MaxTunnels <= 0 {
		cfg.MaxTunnels = DefaultMaxTunnels
	}
	if cfg.MaxLog <= 0 {
		cfg.MaxLog = DefaultMaxLog
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.What == "" {
		cfg.What = "the egress allowlist"
	}
	return &Proxy{cfg: cfg, slots: make(chan struct{}, cfg.MaxTunnels)}
}

// ServeHTTP admits a CONNECT to an allowed host and tunnels it; it refuses everything else.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := Decision{Time: time.Now().UTC(), Method: r.Method, Target: r.Host}
	if r.Method != http.MethodConnect {
		if r.URL != nil && r.URL.Host != "" {
			d.Target = r.URL.Host
		}
		p.refuse(w, d, http.StatusMethodNotAllowed, "only CONNECT (HTTPS through the proxy) is forwarded; use an https:// URL")
		return
	}
	addr, reason := p.admit(r.Context(), r.Host)
	if reason != "" {
		p.refuse(w, d, http.StatusForbidden, reason)
		return
	}
	d.Addr = addr.String()
	select {
	case p.slots <- struct{}{}:
	default:
		p.refuse(w, d, http.StatusServiceUnavailable, fmt.Sprintf("%d tunnels are open already", cap(p.slots)))
		return
	}
	defer func() { <-p.slots }()
	dctx, cancel := context.WithTimeout(r.Context(), DialTimeout)
	up, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr.String())
	cancel()
	if err != nil {
		p.refuse(w, d, http.StatusBadGateway, "cannot connect to "+addr.String()+": "+errText(err))
		return
	}
	p.tunnel(w, up, d, serverNameFor(r.Host))
}

// serverNameFor is the TLS server name a tunnel to target (an admitted host:port) must ask
// for: its host, lower-case and without a trailing dot; none for an IP address.
func serverNameFor(target string) string {
	host, _, _ := net.SplitHostPort(target)
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	return host
}

// admit checks target (host:port of a CONNECT) against the allowlist and the private guard, and
// returns the address to dial, or why not.
func (p *Proxy) admit(ctx context.Context, target string) (netip.AddrPort, string) {
	host, ps, err := net.SplitHostPort(target)
	port, perr := strconv.Atoi(ps)
	if err != nil || perr != nil || port < 1 || port > 65535 || host == "" {
		return netip.AddrPort{}, fmt.Sprintf("%q is not host:port", target)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.admitLiteral(ip.Unmap(), port)
	}
	if !p.allowed(host, port) {
		return netip.AddrPort{}, fmt.Sprintf("%s:%d is not on %s", host, port, p.cfg.What)
	}
	rctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	addrs, err := p.cfg.Resolve(rctx, host)
	cancel()
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, fmt.Sprintf("cannot resolve %s: %s", host, errText(err))
	}
	for _, a := range addrs {
		if a = a.Unmap(); Private(a) && !p.permitted(a) {
			// Every address is checked: a name that answers with a private address is refused
			// whole, whatever else it answers.
			return netip.AddrPort{}, fmt.Sprintf("%s resolves to %s, a private, loopback or link-local address (the private egress guard)", host, a)
		}
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(port)), ""
}

// admitLiteral admits an IP literal a rule names exactly.
func (p *Proxy) admitLiteral(ip netip.Addr, port int) (netip.AddrPort, string) {
	ap := netip.AddrPortFrom(ip, uint16(port))
	listed := false
	for _, r := range p.cfg.Allow {
		listed = listed || (r.IP.IsValid() && r.IP == ip && r.Port == port)
	}
	switch {
	case !listed:
		return ap, fmt.Sprintf("%s is an IP address not on %s (name the host, or list the address)", ap, p.cfg.What)
	case Private(ip) && !p.cfg.AllowPrivateLiterals && !p.permitted(ip):
		return ap, fmt.Sprintf("%s is a private, loopback or link-local address (the private egress guard)", ip)
	}
	return ap, ""
}

func (p *Proxy) allowed(host string, port int) bool {
	for _, r := range p.cfg.Allow {
		if !r.IP.IsValid() && r.Match(host, port) {
			return true
		}
	}
	return false
}

func (p *Proxy) permitted(a netip.Addr) bool {
	for _, pre := range p.cfg.TestPermit {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// refuse answers code with the reason, and logs it.
func (p *Proxy) refuse(w http.ResponseWriter, d Decision, code int, reason string) {
	d.Reason = reason
	p.log(d)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	fmt.Fprintf(w, "autonomy egress proxy: refused: %s\n", reason)
}

func (p *Proxy) log(d Decision) {
	if p.cfg.Log == nil {
		return
	}
	line, _ := json.Marshal(d) // plain data: cannot fail
	p.logMu.Lock()
	defer p.logMu.Unlock()
	if p.full {
		return
	}
	if p.logged+int64(len(line))+1 > p.cfg.MaxLog {
		p.full = true
		line, _ = json.Marshal(Decision{Time: d.Time, Reason: "the egress log is full: later decisions are not recorded"})
	}
	p.logged += int64(len(line)) + 1
	_, _ = p.cfg.Log.Write(append(line, '\n'))
}

// tunnel answers the CONNECT, reads the client's TLS ClientHello (checkHello), and copies both
// ways until either side ends or the proxy stops. It logs d, allowed or refused by the hello.
func (p *Proxy) tunnel(w http.ResponseWriter, up net.Conn, d Decision, name string) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.tunnels.track(down, up) {
		return
	}
	defer p.tunnels.untrack(down, up)
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	// What the client sent after its CONNECT, already buffered, goes first.
	src := io.MultiReader(io.LimitReader(buf, int64(buf.Reader.Buffered())), down)
	_ = down.SetReadDeadline(time.Now().Add(HeaderTimeout))
	hello, reason := checkHello(src, name)
	_ = down.SetDeadline(time.Time{})
	if reason != "" {
		d.Reason = reason
		p.log(d)
		return
	}
	d.Allowed = true
	p.log(d)
	relay(down, io.MultiReader(bytes.NewReader(hello), src), up)
}

// helloLimit bounds the ClientHello read: Go's TLS server reads a handshake message of at most
// 64 KiB, in records of 5 bytes of header each.
const helloLimit = 1<<16 + 1<<12

// extECH is the TLS extension of an encrypted ClientHello, whose outer server name is not the
// one the server answers for.
const extECH = 0xfe0d

// checkHello reads the TLS ClientHello from src and returns the bytes read, to be forwarded, or
// why the tunnel is refused: not TLS, an encrypted ClientHello, or a server name (SNI) other than
// name (none for an IP address), which would reach another host behind the same address (domain
// fronting through a CDN an allowed name is on).
func checkHello(src io.Reader, name string) ([]byte, string) {
	var read bytes.Buffer
	var hello *tls.ClientHelloInfo
	conn := &helloConn{r: io.TeeReader(io.LimitReader(src, helloLimit), &read)}
	_ = tls.Server(conn, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		hello = h
		return nil, errHelloRead
	}}).Handshake()
	switch {
	case hello == nil:
		return nil, "the tunnel did not start with a TLS ClientHello: only HTTPS is forwarded"
	case slices.Contains(hello.Extensions, extECH):
		return nil, "the TLS ClientHello is encrypted (ECH): its server name cannot be checked"
	case !strings.EqualFold(hello.ServerName, name) && name == "":
		return nil, fmt.Sprintf("the TLS server name %q was asked of an IP address", hello.ServerName)
	case !strings.EqualFold(hello.ServerName, name):
		return nil, fmt.Sprintf("the TLS server name %q is not the CONNECT host %q (domain fronting)", hello.ServerName, name)
	}
	return read.Bytes(), ""
}

var errHelloRead = errors.New("egress: the ClientHello is read")

// helloConn is a net.Conn reading r, discarding what is written: the TLS server that parses a
// ClientHello on it answers nobody.
type helloConn struct{ r io.Reader }

func (c *helloConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *helloConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *helloConn) Close() error                     { return nil }
func (c *helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *helloConn) SetDeadline(time.Time) error      { return nil }
func (c *helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c *helloConn) SetWriteDeadline(time.Time) error { return nil }

func errText(err error) string {
	if err == nil {
		return "no address"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Err
	}
	return err.Error()
}

// Listen serves p on addr ("127.0.0.1:0" for a free port) until ctx ends; it returns the
// address it listens on. When ctx ends every tunnel is closed, and done receives (and is closed)
// once all are.
func Listen(ctx context.Context, p *Proxy, addr string) (string, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("egress: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: HeaderTimeout, MaxHeaderBytes: MaxHeaderBytes,
		IdleTimeout: time.Minute, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		_ = srv.Close() // the listener and every connection not hijacked
		p.tunnels.closeAll()
	}()
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		<-ctx.Done()
		p.tunnels.closeAll()
		done <- err
		close(done)
	}()
	return ln.Addr().String(), done, nil
}
