//go:build unix

package egress

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// requireHelpers fails the test, naming the package, when a jail's helper is missing.
func requireHelpers(t *testing.T) {
	t.Helper()
	for _, h := range append(append([]string(nil), Helpers...), "curl") {
		if _, err := exec.LookPath(h); err != nil {
			t.Fatalf("%s is not on PATH: apt-get install %s (.ci/run does)", h, map[string]string{"bwrap": "bubblewrap"}[h]+strings.TrimPrefix(h, "bwrap"))
		}
	}
}

func server(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Port()
}

// runJailed runs script in the jail, through sh, and returns its output.
func runJailed(t *testing.T, j *Jail, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := j.Wrap([]string{"/bin/sh", "-c", script})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the jailed command timed out:\n%s", out)
	}
	if err != nil {
		t.Fatalf("the jailed command: %v\n%s", err, out)
	}
	return string(out)
}

// Inside the jail a bridged loopback port reaches the host's, and nothing else does: another
// port of the host's loopback, nor any other address.
func TestJailBridgesOnlyItsPorts(t *testing.T) {
	requireHelpers(t)
	bridged, other := server(t, "bridged"), server(t, "other")
	var p int
	for _, c := range bridged {
		p = p*10 + int(c-'0')
	}
	j, err := NewJail(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := j.dir
	out := runJailed(t, j, `curl -sS --max-time 10 http://127.0.0.1:`+bridged+`/; echo
curl -sS --max-time 10 http://127.0.0.1:`+other+`/ || echo other-unreachable
curl -sS --max-time 10 http://`+hostAddr(t)+`:`+other+`/ || echo host-unreachable`)
	if !strings.Contains(out, "bridged\n") || strings.Contains(out, "other\n") || !strings.Contains(out, "other-unreachable") || !strings.Contains(out, "host-unreachable") {
		t.Errorf("inside the jail:\n%s", out)
	}
	if err := j.Close(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the jail's sockets are left behind: %v", err)
	}
}

// hostAddr is an address of this machine other than loopback, or 192.0.2.1 (TEST-NET) when it
// has none: either way unreachable from the jail.
func hostAddr(t *testing.T) string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return "192.0.2.1"
}

// RootFileCaps keeps, for a process run as root, only the capabilities over files; for any other
// it adds nothing (bubblewrap gives it none).
func TestRootFileCapsArgs(t *testing.T) {
	got := strings.Join((&Confinement{Writable: true, RootFileCaps: true}).args(), " ")
	caps := " --cap-drop ALL --cap-add CAP_CHOWN --cap-add CAP_DAC_OVERRIDE --cap-add CAP_FOWNER --cap-add CAP_FSETID"
	if root := os.Geteuid() == 0; strings.HasSuffix(got, caps) != root || strings.Count(got, "--cap-") != 5 && root {
		t.Errorf("args, run as root %v:\n%s", root, got)
	}
}

// A jail of RootFileCaps run as root cannot change the kernel's settings: through the host's
// /proc it wrote core_pattern, and the kernel ran its program as root outside every namespace
// (attack33). The probe writes the value back as it is, so a failure changes nothing. Every
// other jail leaves /proc whole, where a nested sandbox mounts its own (the presets' do).
func TestJailKernelSettingsAreReadOnly(t *testing.T) {
	requireHelpers(t)
	j, err := NewJail()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	run := func(c *Confinement, script string) string {
		t.Helper()
		argv := j.WrapIn(c, []string{"/bin/sh", "-c", script})
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%+v: %v\n%s", c, err, out)
		}
		return string(out)
	}
	probe := `cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern 2>/dev/null && echo sysctl-written; ` +
		`d=/sys/kernel/mm/transparent_hugepage/defrag; v=$(sed 's/.*\[\(.*\)\].*/\1/' $d) && (echo "$v" > $d) 2>/dev/null && echo sys-written; echo end`
	if out := run(&Confinement{Writable: true, RootFileCaps: true}, probe); !strings.Contains(out, "end") || strings.Contains(out, "written") {
		t.Errorf("RootFileCaps:\n%s", out)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the kernel refuses these writes to any user but root, whatever the jail does")
	}
	nested := `bwrap --ro-bind / / --unshare-pid --proc /proc true && echo nested-ok`
	if out := run(&Confinement{Writable: true}, nested); !strings.Contains(out, "nested-ok") {
		t.Errorf("a nested sandbox in a writable jail:\n%s", out)
	}
}

// A confinement never binds the root itself writable, nor a relative or missing path.
func TestConfinementArgs(t *testing.T) {
	dir := t.TempDir()
	c := &Confinement{Binds: []Bind{{Path: "/", Write: true}, {Path: "relative", Write: true}, {Path: dir + "/missing", Write: true}, {Path: dir, Write: true}, {Path: dir}}, NoUserNS: true, PidNS: true}
	got := strings.Join(c.args(), " ")
	want := "--ro-bind / / --dev-bind /dev /dev --unshare-pid --proc /proc --bind " + dir + " " + dir + " --ro-bind " + dir + " " + dir + " --unshare-user --disable-userns --cap-drop ALL"
	if got != want {
		t.Errorf("args:\n%s\nwant\n%s", got, want)
	}
	// Writable with a process namespace: the whole filesystem, and a /proc of its own over it
	// (the root's bind was dropped with the /proc one it was taken for).
	c = &Confinement{Writable: true, PidNS: true, NoUserNS: true}
	if got, want := strings.Join(c.args(), " "), "--dev-bind / / --unshare-pid --proc /proc --unshare-user --disable-userns --cap-drop ALL"; got != want {
		t.Errorf("args:\n%s\nwant\n%s", got, want)
	}
}
