//go:build !linux

package proc

import "errors"

// BecomeSubreaper is Linux only: elsewhere a process that leaves its session's process group is
// not found.
func BecomeSubreaper() error {
	return errors.New("a child subreaper needs Linux")
}

// KillOrphans is Linux only (see BecomeSubreaper).
func KillOrphans(spare func(pid int) bool, group int) []int { return nil }
