//go:build !linux

package k8stest

import "syscall"

// dieWithParent is Linux only (Pdeathsig): elsewhere a control plane whose test process died
// without Stop is left running.
func dieWithParent(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }
