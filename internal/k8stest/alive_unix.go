//go:build unix

package k8stest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// alive reports whether pid is a running process (not a zombie not yet waited for).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
