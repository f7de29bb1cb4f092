//go:build unix

package egress

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

// Jail is a network namespace of its own for a command (bubblewrap's --unshare-net: loopback
// only), into which exactly the ports it was made with are bridged: inside, socat listens on
// 127.0.0.1:PORT and relays each connection over a unix socket to this process, which relays it
// to the same port of the host's loopback (where the model proxy and the egress proxy listen).
// Nothing else of the host's network is reachable from inside.
type Jail struct {
	// dir holds the jail's sockets, in parent, the folder every jail of this user makes its
	// own in (Wrap hides the others).
	dir, parent string
	ports       []int
	lns         []net.Listener
	// relays are the connections bridged; wg the listeners' goroutines.
	relays conns
	wg     sync.WaitGroup
	// busy counts the connections relayed now, at most MaxRelays.
	busy atomic.Int32
}

// MaxRelays is how many connections one jail relays at once, per port (socat's max-children
// inside, and the relays outside); one more waits inside until one ends.
const MaxRelays = 64 // bridgeScript's max-children

// NewJail bridges each of ports (of 127.0.0.1) into a namespace Wrap makes. Close it once the
// command is over.
func NewJail(ports ...int) (*Jail, error) {
	parent, err := jailsDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "jail-")
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	j := &Jail{dir: dir, parent: parent}
	for i, port := range ports {
		if port < 1 || port > 65535 {
			j.Close()
			return nil, fmt.Errorf("egress: port %d out of range", port)
		}
		ln, err := net.Listen("unix", j.sock(i))
		if err != nil {
			j.Close()
			return nil, fmt.Errorf("egress: %w", err)
		}
		j.ports, j.lns = append(j.ports, port), append(j.lns, ln)
		j.wg.Add(1)
		go j.serve(ln, "127.0.0.1:"+strconv.Itoa(port), MaxRelays*int32(len(ports)))
	}
	return j, nil
}

func (j *Jail) sock(i int) string { return filepath.Join(j.dir, strconv.Itoa(i)) }

// JailsDir is the folder of this user's jails, which every jail sees empty but for its own
// folder and its Confinement's Aliases: where an alias's At goes.
func JailsDir() (string, error) { return jailsDir() }

// jailsDir is the folder of this user's jails, made mode 0700 if it is not there: a folder of
// its own, not a link, or it is refused.
func jailsDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "autonomy-egress-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("egress: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("egress: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("egress: %s is not a folder of this user's alone (mode 0700): remove it", dir)
	}
	return dir, nil
}

// bridgeScript starts one socat per port (its arguments: the count, then port and socket pairs,
// then "--" and the command), waits until each listens (read from the namespace's
// /proc/net/tcp, without connecting), runs the command and ends the socats. Everything is in the
// caller's process group: a signal to the group reaches the command and the socats alike. (The
// jail shares the caller's process namespace: the agents' own bubblewrap sandboxes, nested in
// it, read /proc, which a namespace of its own would have to remount, which nested bubblewrap
// then cannot.)
const bridgeScript = `n=$1; shift
ports=
while [ "$n" -gt 0 ]; do
  socat TCP-LISTEN:"$1",bind=127.0.0.1,reuseaddr,fork,max-children=64 UNIX-CONNECT:"$2" >/dev/null &
  ports="$ports $1"; pids="$pids $!"; shift 2; n=$((n-1))
done
shift
for p in $ports; do
  hex=$(printf '%04X' "$p"); t=0
  until grep -q "0100007F:$hex 00000000:0000 0A" /proc/net/tcp; do
    t=$((t+1))
    if [ "$t" -gt 400 ]; then echo "autonomy: the bridge to 127.0.0.1:$p did not start (socat)" >&2; exit 70; fi
    sleep 0.05
  done
done
"$@"
rc=$?
kill $pids 2>/dev/null
exit $rc
`

// Wrap is argv run inside the jail: bwrap sees the whole filesystem as it is (the agent's own
// sandbox confines it further), and only the jail's network, but for what would reach out of it
// through a socket on disk: the other jails' sockets (the folder of this user's jails is empty
// inside but for this jail's), the user's session bus and services (/run/user/UID: systemd
// --user runs a command outside every sandbox) and X11's sockets are not there.
func (j *Jail) Wrap(argv []string) []string { return j.WrapIn(nil, argv) }

// WrapIn is argv run inside the jail, confined by c (Wrap's whole filesystem when c is nil), with
// Wrap's masks.
func (j *Jail) WrapIn(c *Confinement, argv []string) []string {
	out := append([]string{"bwrap"}, c.args()...)
	out = append(out, "--tmpfs", j.parent, "--bind", j.dir, j.dir)
	out = append(out, c.aliasArgs(j.parent)...)
	for _, d := range []string{filepath.Join("/run/user", strconv.Itoa(os.Getuid())), "/tmp/.X11-unix"} {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			out = append(out, "--tmpfs", d)
		}
	}
	out = append(out, "--unshare-net", "--die-with-parent", "--",
		"/bin/sh", "-c", bridgeScript, "autonomy-egress", strconv.Itoa(len(j.ports)))
	for i, p := range j.ports {
		out = append(out, strconv.Itoa(p), j.sock(i))
	}
	return append(append(out, "--"), argv...)
}

// serve relays ln's connections to target, at most limit at once across the jail's bridges
// (passed in: the loop making the bridges still appends to j.ports while the first one serves).
func (j *Jail) serve(ln net.Listener, target string, limit int32) {
	defer j.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if j.busy.Add(1) > limit {
			j.busy.Add(-1)
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", target, DialTimeout)
		if err != nil {
			j.busy.Add(-1)
			c.Close()
			continue
		}
		if !j.relays.track(c, up) {
			j.busy.Add(-1)
			continue
		}
		go func() {
			defer j.busy.Add(-1)
			defer j.relays.untrack(c, up)
			relay(c, c, up)
		}()
	}
}

// Close ends the bridges and every connection through them, and removes the sockets.
func (j *Jail) Close() error {
	for _, ln := range j.lns {
		ln.Close()
	}
	j.wg.Wait()
	j.relays.closeAll()
	return os.RemoveAll(j.dir)
}
