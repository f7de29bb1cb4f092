// Package proc starts, recognises and stops the process groups that run local sessions, on Linux
// and macOS.
//
// A session's process is recorded as a pair (pid, start time) so that any later process, not only
// the one that started it, can tell whether that very process still runs: a pid alone may have been
// reused by an unrelated process since. Every session leads a process group of its own, so that
// stopping it stops whatever it started too.
//
// The facts about a process come from the OS: /proc on Linux (proc_linux.go), the kern.proc sysctl
// on macOS (proc_darwin.go). On any other OS (proc_other.go) the package compiles but starts and
// recognises nothing, and the local runner refuses to run.
package proc

// Ancestors lists the parent of pid, its parent, and so on up to the first process (at most 128
// of them), each with its start time: the chain a process cannot leave, however it changes its
// environment. A process that left its parent is re-parented (to init, or a subreaper), and the
// chain follows that.
func Ancestors(pid int) []Named {
	var out []Named
	for range 128 {
		ppid, err := Parent(pid)
		if err != nil || ppid <= 0 {
			break
		}
		start, err := StartTime(ppid)
		if err != nil {
			break
		}
		out = append(out, Named{PID: ppid, Start: start})
		pid = ppid
	}
	return out
}

// Named is one process for good: a pid and its start time.
type Named struct {
	PID   int
	Start uint64
}
