// Package egress is the allowlisting CONNECT proxy a substrate starts beside an agent, outside
// its sandbox, and the network namespace the agent runs in, into which only the model proxy and
// this proxy are bridged (Jail, unix only).
//
// The proxy admits an HTTP CONNECT to a host the allowlist names (Rule: an exact host or
// *.suffix, port 443 unless the rule names one) and refuses everything else with 403 and the
// reason: a host not listed, a plain-HTTP request (only CONNECT is forwarded), and any target
// that resolves to a loopback, private, link-local, CGNAT, multicast or unspecified address. The
// proxy resolves a name itself, checks every address it gets, and dials the address it checked,
// so a name that rebinds to a private address between the check and the dial reaches nothing.
// An IP literal is admitted only when a rule names it exactly, and a private one only when
// Config.AllowPrivateLiterals is set (private_egress_guard off).
//
// Header reads are bounded in size and time, dials and resolutions in time; every tunnel ends
// when the proxy is stopped. Each decision is written to Config.Log as one JSON line.
package egress

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// DefaultPort is the port a rule without one admits.
const DefaultPort = 443

// Rule is one entry of an egress allowlist.
type Rule struct {
	// Host is a lower-case host name (without the "*." of a wildcard) or an IP literal.
	Host string
	// Wildcard admits every subdomain of Host (not Host itself): "*.example.com".
	Wildcard bool
	// Port is the one port admitted (DefaultPort unless the rule names one).
	Port int
	// IP is Host parsed, for an IP literal.
	IP netip.Addr
}

// String is the rule as written in a profile.
func (r Rule) String() string {
	h := r.Host
	if r.Wildcard {
		h = "*." + h
	}
	if r.IP.Is6() {
		h = "[" + h + "]"
	}
	if r.Port != DefaultPort {
		h += ":" + strconv.Itoa(r.Port)
	}
	return h
}

var label = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`) })

// ParseRule reads one allowlist entry: "registry.npmjs.org", "*.pythonhosted.org",
// "proxy.example.com:8443", "203.0.113.7". The error says what is wrong and how to write it.
func ParseRule(s string) (Rule, error) {
	switch {
	case strings.TrimSpace(s) == "":
		return Rule{}, fmt.Errorf("an empty host")
	case strings.Contains(s, "://"):
		return Rule{}, fmt.Errorf("%q names a scheme: give the host alone, e.g. %q", s, hostOf(s))
	case strings.ContainsAny(s, "/?#@ \t"):
		return Rule{}, fmt.Errorf("%q is not a host: give a host name without a path, user or spaces", s)
	}
	host, port, err := splitPort(s)
	if err != nil {
		return Rule{}, err
	}
	r := Rule{Port: port}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return Rule{}, fmt.Errorf("%q: an address with a zone cannot be allowed", s)
		}
		r.IP = ip.Unmap()
		r.Host = r.IP.String()
		return r, nil
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard, host = true, rest
	}
	if host == "*" || host == "" || strings.Contains(host, "*") {
		return Rule{}, fmt.Errorf("%q: a wildcard is a leading *. before a domain, e.g. *.example.com; * alone would allow every host", s)
	}
	labels := strings.Split(host, ".")
	if len(host) > 253 || (r.Wildcard && len(labels) < 2) {
		return Rule{}, fmt.Errorf("%q: a wildcard must keep at least two labels, e.g. *.example.com", s)
	}
	for _, l := range labels {
		if !label().MatchString(l) {
			return Rule{}, fmt.Errorf("%q is not a host name: labels are letters, digits and inner hyphens", s)
		}
	}
	r.Host = host
	return r, nil
}

// hostOf is s without its scheme and path, for a hint.
func hostOf(s string) string {
	_, rest, _ := strings.Cut(s, "://")
	rest, _, _ = strings.Cut(rest, "/")
	return rest
}

// splitPort splits "host", "host:port", "[v6]:port" or a bare IPv6 literal.
func splitPort(s string) (string, int, error) {
	if _, err := netip.ParseAddr(s); err == nil {
		return s, DefaultPort, nil
	}
	if !strings.Contains(s, ":") {
		return s, DefaultPort, nil
	}
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("%q: write host or host:port (an IPv6 address in brackets with a port)", s)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
	}
	return host, n, nil
}

// Match reports whether r admits host (lower-case, no trailing dot) on port.
func (r Rule) Match(host string, port int) bool {
	if port != r.Port {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// Private reports whether a is an address no name may reach through the proxy: loopback,
// private (RFC 1918, fc00::/7), link-local (the cloud metadata service), CGNAT, multicast,
// unspecified, IPv4's "this network", the IETF protocol assignments (192.0.0.0/24), the
// benchmarking network (198.18.0.0/15), the reserved 240.0.0.0/4 (with the broadcast address),
// Azure's WireServer (168.63.129.16: GitHub's hosted runners are Azure VMs), site-local and
// discard-only IPv6, and local-use NAT64 and Teredo, whose IPv4 cannot be read back. An IPv6
// address that embeds an IPv4 one (IPv4-mapped or -compatible, NAT64's well-known prefix, 6to4)
// is judged by that IPv4 address.
func Private(a netip.Addr) bool {
	a = a.Unmap()
	if v4, ok := embeddedV4(a); ok {
		return Private(v4)
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || !a.IsValid() {
		return true
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// embeddedV4 is the IPv4 address an IPv6 one carries: IPv4-compatible ::a.b.c.d (but :: and
// ::1), NAT64's 64:ff9b::/96, and 6to4's 2002::/16.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case compat.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

var (
	compat    = netip.MustParsePrefix("::/96")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	blocked   = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),        // this network
		netip.MustParsePrefix("100.64.0.0/10"),    // CGNAT
		netip.MustParsePrefix("192.0.0.0/24"),     // IETF protocol assignments
		netip.MustParsePrefix("198.18.0.0/15"),    // benchmarking
		netip.MustParsePrefix("240.0.0.0/4"),      // reserved, and 255.255.255.255
		netip.MustParsePrefix("168.63.129.16/32"), // Azure WireServer
		netip.MustParsePrefix("64:ff9b:1::/48"),   // local-use NAT64
		netip.MustParsePrefix("2001::/32"),        // Teredo
		netip.MustParsePrefix("fec0::/10"),        // site-local
		netip.MustParsePrefix("100::/64"),         // discard-only
	}
)
