//go:build !linux

package proc

// GroupHasEnv cannot read another process's environment here: it says yes when the group has
// a member (see the Linux version).
func GroupHasEnv(pgid int, kv string) bool { return len(Members(pgid)) > 0 }

// GroupsWithEnv cannot read another process's environment here: it finds none (see the Linux
// version).
func GroupsWithEnv(kv string) []int { return nil }
