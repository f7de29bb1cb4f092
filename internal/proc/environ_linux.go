//go:build linux

package proc

import (
	"bytes"
	"os"
	"sort"
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

// GroupsWithEnv is the process groups, sorted, of the processes started with kv (NAME=value) in
// their environment that have not exited: whatever a session started, in any group, that outlived
// the process that started it. Only processes whose environment can be read (this user's) count.
func GroupsWithEnv(kv string) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	want := []byte(kv)
	seen := map[int]bool{}
	var groups []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		s, err := readStat(pid)
		if err != nil || gone(s.state) || seen[s.pgrp] {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil {
			continue
		}
		for _, e := range bytes.Split(data, []byte{0}) {
			if bytes.Equal(e, want) {
				seen[s.pgrp] = true
				groups = append(groups, s.pgrp)
				break
			}
		}
	}
	sort.Ints(groups)
	return groups
}
