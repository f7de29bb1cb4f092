//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
)

// GroupHasEnv reports whether some process of the group pgid was started with kv (NAME=value)
// in its environment, read from /proc/PID/environ. A group none of whose environments can be
// read (another user's, or made undumpable) counts as having it: the check tells a session's
// group from a process whose pid the database was made to name, not more.
func GroupHasEnv(pgid int, kv string) bool {
	members := Members(pgid)
	if len(members) == 0 {
		return false
	}
	want := []byte(kv)
	unreadable := 0
	for _, pid := range members {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || len(data) == 0 {
			unreadable++
			continue
		}
		for _, e := range bytes.Split(data, []byte{0}) {
			if bytes.Equal(e, want) {
				return true
			}
		}
	}
	return unreadable == len(members)
}
