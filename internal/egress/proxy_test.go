package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log several tunnels write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) decisions(t *testing.T) []Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Decision
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var d Decision
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, d)
	}
	return out
}

// resolver answers names from a table, as DNS would.
func resolver(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range table[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if out == nil {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

// start serves a proxy with cfg; it is stopped when the test ends.
func start(t *testing.T, cfg Config) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := Listen(ctx, New(cfg), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return addr, cancel, done
}

func rules(t *testing.T, ss ...string) []Rule {
	var out []Rule
	for _, s := range ss {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// connect sends a CONNECT for target and returns the status code, the body of a refusal, and
// the connection (a tunnel when the code is 200).
func connect(t *testing.T, proxy, target string) (int, string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode == http.StatusOK {
		return 200, "", c
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), c
}

// target is a TLS server on loopback, named allowed.test and other.test by the resolver.
func target(t *testing.T) (port string) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Port()
}

var loopbackPermit = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

func TestProxyAdmitsOnlyTheAllowlist(t *testing.T) {
	port := target(t)
	log := &syncBuffer{}
	table := map[string][]string{"allowed.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}, "sub.wild.test": {"127.0.0.1"}}
	addr, _, _ := start(t, Config{Allow: rules(t, "allowed.test:"+port, "*.wild.test:"+port), Log: log,
		Resolve: resolver(table), TestPermit: loopbackPermit, What: "policy.box.local.egress.allow"})
	client := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: addr}),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test's own server
	}}
	for _, host := range []string{"allowed.test", "sub.wild.test"} {
		resp, err := client.Get("https://" + host + ":" + port + "/")
		if err != nil {
			t.Fatalf("%s through the proxy: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "reached" {
			t.Errorf("%s: %q", host, body)
		}
	}
	for tgt, want := range map[string]string{
		"other.test:" + port:  "other.test:" + port + " is not on policy.box.local.egress.allow",
		"allowed.test:443":    "allowed.test:443 is not on",
		"wild.test:" + port:   "wild.test:" + port + " is not on",
		"127.0.0.1:" + port:   "an IP address not on",
		"[::1]:" + port:       "an IP address not on",
		"allowed.test":        "is not host:port",
		"allowed.test:999999": "is not host:port",
	} {
		code, body, _ := connect(t, addr, tgt)
		if code != http.StatusForbidden || !strings.Contains(body, "refused: ") || !strings.Contains(body, want) {
			t.Errorf("CONNECT %s: %d %q, want 403 saying %q", tgt, code, body, want)
		}
	}
	ds := log.decisions(t)
	allowed := 0
	for _, d := range ds {
		if d.Allowed {
			allowed++
			if d.Addr != "127.0.0.1:"+port || d.Reason != "" {
				t.Errorf("allowed decision %+v", d)
			}
		} else if d.Reason == "" {
			t.Errorf("refusal without a reason: %+v", d)
		}
	}
	if allowed != 2 || len(ds) != 9 {
		t.Errorf("%d decisions, %d allowed; want 9, 2:\n%+v", len(ds), allowed, ds)
	}
}

// The private guard: a name, however listed, never reaches a private address, whatever else it
// resolves to (DNS rebinding), and a private literal only with AllowPrivateLiterals.
func TestProxyPrivateGuard(t *testing.T) {
	port := target(t)
	table := map[string][]string{
		"allowed.test":  {"127.0.0.1"},
		"rebind.test":   {"203.0.113.7", "127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"mapped.test":   {"::ffff:10.0.0.1"},
	}
	allow := rules(t, "allowed.test:"+port, "rebind.test:"+port, "metadata.test:"+port, "mapped.test:"+port, "127.0.0.1:"+port)
	addr, _, _ := start(t, Config{Allow: allow, Resolve: resolver(table)})
	for _, tgt := range []string{"allowed.test", "rebind.test", "metadata.test", "mapped.test", "127.0.0.1"} {
		code, body, _ := connect(t, addr, tgt+":"+port)
		if code != http.StatusForbidden || !strings.Contains(body, "private egress guard") {
			t.Errorf("CONNECT %s: %d %q, want refused by the private guard", tgt, code, body)
		}
	}
	open, _, _ := start(t, Config{Allow: allow, Resolve: resolver(table), AllowPrivateLiterals: true})
	if code, body, _ := connect(t, open, "127.0.0.1:"+port); code != 200 {
		t.Errorf("a listed loopback literal with the guard off: %d %q", code, body)
	}
	if code, _, _ := connect(t, open, "allowed.test:"+port); code != http.StatusForbidden {
		t.Errorf("a name resolving to loopback with the guard off: %d, want 403", code)
	}
}

func TestProxyRefusesPlainHTTPAndHugeHeaders(t *testing.T) {
	addr, _, _ := start(t, Config{Allow: rules(t, "example.com:80")})
	proxy := &url.URL{Scheme: "http", Host: addr}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}).Get("http://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), "only CONNECT") {
		t.Errorf("plain HTTP: %d %q", resp.StatusCode, body)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		fmt.Fprintf(c, "CONNECT example.com:443 HTTP/1.1\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 1<<20))
	}()
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 1 MiB header: %v %v, want 431", resp, err)
	}
}

// Stopping the proxy ends the tunnels open through it, and done fires once they are gone.
func TestProxyStopEndsTunnels(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler()) // for its certificate
	defer srv.Close()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := tls.NewListener(raw, srv.TLS.Clone())
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }() // an echo server
		}
	}()
	port := fmt.Sprint(raw.Addr().(*net.TCPAddr).Port)
	addr, cancel, done := start(t, Config{Allow: rules(t, "echo.test:"+port), Resolve: resolver(map[string][]string{"echo.test": {"127.0.0.1"}}), TestPermit: loopbackPermit})
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		code, body, raw := connect(t, addr, "echo.test:"+port)
		if code != 200 {
			t.Fatalf("CONNECT: %d %q", code, body)
		}
		c := tls.Client(raw, &tls.Config{ServerName: "echo.test", InsecureSkipVerify: true}) //nolint:gosec // the test's own server
		fmt.Fprintf(c, "ping %d\n", i)
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != fmt.Sprintf("ping %d\n", i) {
			t.Fatalf("echo through the tunnel: %q %v", line, err)
		}
		conns = append(conns, c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("done: %v", err)
	}
	for _, c := range conns {
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("a tunnel is still open after the proxy stopped (%d bytes)", n)
		}
	}
}

// TestProxyChecksTheServerName: a tunnel carries TLS whose server name (SNI) is the CONNECT
// host, in any case (and a CONNECT host with a trailing dot is that host); another name (domain
// fronting through a CDN the allowed name is on), a name asked of a listed IP address, and
// anything not TLS are refused, and logged.
func TestProxyChecksTheServerName(t *testing.T) {
	port := target(t)
	log := &syncBuffer{}
	addr, _, _ := start(t, Config{Allow: rules(t, "allowed.test:"+port, "127.0.0.1:"+port), Log: log, AllowPrivateLiterals: true,
		Resolve: resolver(map[string][]string{"allowed.test": {"127.0.0.1"}}), TestPermit: loopbackPermit})
	get := func(connectTo, sni string) error {
		code, body, raw := connect(t, addr, connectTo)
		if code != 200 {
			return fmt.Errorf("CONNECT %d %q", code, body)
		}
		c := tls.Client(raw, &tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // the test's own server
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sni)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); string(b) != "reached" {
			return fmt.Errorf("body %q", b)
		}
		return nil
	}
	for _, c := range []struct{ connect, sni string }{
		{"allowed.test:" + port, "allowed.test"}, {"allowed.test:" + port, "ALLOWED.test"},
		{"allowed.test.:" + port, "allowed.test"}, {"127.0.0.1:" + port, ""},
	} {
		if err := get(c.connect, c.sni); err != nil {
			t.Errorf("CONNECT %s, SNI %q: %v", c.connect, c.sni, err)
		}
	}
	for _, c := range []struct{ connect, sni string }{
		{"allowed.test:" + port, "other.test"}, {"allowed.test:" + port, "allowed.test.other.test"},
		{"127.0.0.1:" + port, "other.test"},
	} {
		if err := get(c.connect, c.sni); err == nil {
			t.Errorf("CONNECT %s, SNI %q: reached", c.connect, c.sni)
		}
	}
	code, body, raw := connect(t, addr, "allowed.test:"+port)
	if code != 200 {
		t.Fatalf("CONNECT %d %q", code, body)
	}
	fmt.Fprintf(raw, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if n, err := raw.Read(make([]byte, 1)); err == nil {
		t.Errorf("plain HTTP through the tunnel was answered (%d bytes)", n)
	}
	var reasons []string
	allowed := 0
	for _, d := range log.decisions(t) {
		if d.Allowed {
			allowed++
		} else {
			reasons = append(reasons, d.Reason)
		}
	}
	all := strings.Join(reasons, "\n")
	if allowed != 4 || len(reasons) != 4 || strings.Count(all, "(domain fronting)") != 2 || !strings.Contains(all, "asked of an IP address") || !strings.Contains(all, "not start with a TLS ClientHello") {
		t.Errorf("%d allowed, refusals:\n%s", allowed, all)
	}
}

// Many clients at once, allowed and refused (run under -race).
func TestProxyConcurrentClients(t *testing.T) {
	port := target(t)
	addr, _, _ := start(t, Config{Allow: rules(t, "allowed.test:"+port), Resolve: resolver(map[string][]string{"allowed.test": {"127.0.0.1"}}), TestPermit: loopbackPermit, Log: &syncBuffer{}})
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tgt, want := "allowed.test:"+port, http.StatusOK
			if i%2 == 1 {
				tgt, want = "denied.test:"+port, http.StatusForbidden
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", tgt, tgt)
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != want {
				errs <- fmt.Sprintf("%s: %v %v", tgt, resp, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A client that floods the proxy cannot grow its log past MaxLog: the last line says it is full.
func TestProxyLogIsBounded(t *testing.T) {
	log := &syncBuffer{}
	addr, _, _ := start(t, Config{Log: log, MaxLog: 1000})
	for i := 0; i < 30; i++ {
		connect(t, addr, fmt.Sprintf("host%d.test:443", i))
	}
	ds := log.decisions(t)
	if log.b.Len() > 1000+200 || len(ds) < 2 || !strings.Contains(ds[len(ds)-1].Reason, "the egress log is full") {
		t.Errorf("%d bytes, %d decisions, last %+v", log.b.Len(), len(ds), ds[len(ds)-1])
	}
}
