package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		in, want string
		wild     bool
		port     int
	}{
		{"registry.npmjs.org", "registry.npmjs.org", false, 443},
		{"Registry.NPMJS.org.", "registry.npmjs.org", false, 443},
		{"*.pythonhosted.org", "pythonhosted.org", true, 443},
		{"proxy.example.com:8443", "proxy.example.com", false, 8443},
		{"203.0.113.7", "203.0.113.7", false, 443},
		{"[2001:db8::1]:8443", "2001:db8::1", false, 8443},
		{"2001:db8::1", "2001:db8::1", false, 443},
	} {
		r, err := ParseRule(c.in)
		if err != nil || r.Host != c.want || r.Wildcard != c.wild || r.Port != c.port {
			t.Errorf("ParseRule(%q) = %+v, %v", c.in, r, err)
		}
	}
	for in, want := range map[string]string{
		"":                           "empty",
		"https://registry.npmjs.org": `give the host alone, e.g. "registry.npmjs.org"`,
		"example.com/path":           "without a path",
		"user@example.com":           "without a path, user",
		"*":                          "* alone would allow every host",
		"*.com":                      "at least two labels",
		"a.*.example.com":            "a leading *.",
		"example.com:0":              "from 1 to 65535",
		"example.com:http":           "from 1 to 65535",
		"exa_mple.com":               "not a host name",
		"-x.example.com":             "not a host name",
		"fe80::1%eth0":               "zone",
	} {
		if _, err := ParseRule(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}

func TestRuleMatch(t *testing.T) {
	exact, _ := ParseRule("example.com")
	wild, _ := ParseRule("*.example.com")
	ported, _ := ParseRule("example.com:8443")
	for _, c := range []struct {
		r    Rule
		host string
		port int
		want bool
	}{
		{exact, "example.com", 443, true},
		{exact, "example.com", 80, false},
		{exact, "www.example.com", 443, false},
		{exact, "badexample.com", 443, false},
		{wild, "www.example.com", 443, true},
		{wild, "a.b.example.com", 443, true},
		{wild, "example.com", 443, false},
		{wild, "www.badexample.com", 443, false},
		{wild, "example.com.evil.org", 443, false},
		{ported, "example.com", 8443, true},
		{ported, "example.com", 443, false},
	} {
		if got := c.r.Match(c.host, c.port); got != c.want {
			t.Errorf("%s matches %s:%d = %t", c.r, c.host, c.port, got)
		}
	}
}

func TestPrivate(t *testing.T) {
	for s, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "100.64.0.1": true, "0.0.0.0": true, "0.1.2.3": true, "::1": true,
		"fd00::1": true, "fe80::1": true, "::ffff:127.0.0.1": true, "::ffff:10.0.0.1": true, "224.0.0.1": true,
		"203.0.113.7": false, "8.8.8.8": false, "2001:4860::8888": false,
		// What embeds an IPv4 address is judged by it.
		"64:ff9b::a9fe:a9fe": true, "64:ff9b::10.0.0.1": true, "64:ff9b::8.8.8.8": false,
		"2002:a9fe:a9fe::1": true, "2002:7f00:1::": true, "2002:0808:0808::1": false,
		"::169.254.169.254": true, "::10.1.2.3": true, "::8.8.8.8": false,
		"64:ff9b:1::808:808": true, "2001:0:4136:e378:8000:63bf:3fff:fdd2": true,
		"198.18.0.1": true, "198.19.255.255": true, "192.0.0.170": true, "240.0.0.1": true,
		"255.255.255.255": true, "168.63.129.16": true, "168.63.129.17": false, "fec0::1": true, "100::1": true,
	} {
		if got := Private(netip.MustParseAddr(s)); got != want {
			t.Errorf("Private(%s) = %t", s, got)
		}
	}
}
