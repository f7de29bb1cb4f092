package k8stest

import "syscall"

// dieWithParent has the kernel KILL a process of the control plane when the test process that
// started it dies: a test binary that panics (go test's timeout) or is killed runs no Stop, and
// its etcd, API server, controllers and kwok ran on, unowned, for as long as the machine did.
func dieWithParent(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	a.Pdeathsig = syscall.SIGKILL
	return a
}
