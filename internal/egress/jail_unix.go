//go:build unix

package egress

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Jail is a network namespace of its own for a command (bubblewrap's --unshare-net: loopback
// only), into which exactly the ports it was made with are bridged: inside, socat listens on
// 127.0.0.1:PORT and relays each connection over a unix socket to this process, which relays it
// to the same port of the host's loopback (where the model proxy and the egress proxy listen).
// Nothing else of the host's network is reachable from inside.
type Jail struct {
	dir   string
	ports []int
	lns   []net.Listener
	// relays are the connections bridged; wg the listeners' goroutines.
	relays conns
	wg     sync.WaitGroup
}

// NewJail bridges each of ports (of 127.0.0.1) into a namespace Wrap makes. Close it once the
// command is over.
func NewJail(ports ...int) (*Jail, error) {
	dir, err := os.MkdirTemp("", "autonomy-egress-")
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	j := &Jail{dir: dir}
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
		go j.serve(ln, "127.0.0.1:"+strconv.Itoa(port))
	}
	return j, nil
}

func (j *Jail) sock(i int) string { return filepath.Join(j.dir, strconv.Itoa(i)) }

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
  socat TCP-LISTEN:"$1",bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:"$2" >/dev/null &
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
// sandbox confines it further), and only the jail's network.
func (j *Jail) Wrap(argv []string) []string { return j.WrapIn(nil, argv) }

// WrapIn is argv run inside the jail, confined by c (Wrap's whole filesystem when c is nil).
func (j *Jail) WrapIn(c *Confinement, argv []string) []string {
	out := append([]string{"bwrap"}, c.args()...)
	out = append(out, "--unshare-net", "--die-with-parent", "--",
		"/bin/sh", "-c", bridgeScript, "autonomy-egress", strconv.Itoa(len(j.ports)))
	for i, p := range j.ports {
		out = append(out, strconv.Itoa(p), j.sock(i))
	}
	return append(append(out, "--"), argv...)
}

// serve relays each connection of ln to target.
func (j *Jail) serve(ln net.Listener, target string) {
	defer j.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", target, DialTimeout)
		if err != nil {
			c.Close()
			continue
		}
		if !j.relays.track(c, up) {
			continue
		}
		go func() {
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
