package local

import (
	"fmt"
	"runtime"
)

// SupportedOS says why the local runner cannot run on goos (a GOOS value), or nil where it can.
// It needs process groups, signals and the OS's record of each process's start time, which it
// has on Linux (/proc) and macOS (sysctl); Windows has none of these in the same form. Compiling
// for the local target works everywhere: only running it is refused.
func SupportedOS(goos string) error {
	switch goos {
	case "linux", "darwin":
		return nil
	}
	return fmt.Errorf("the local runner needs a Unix-like OS (Linux or macOS), and this is %s: run it inside WSL (Windows Subsystem for Linux) or on a Linux or macOS machine, or compile the profile for --target gh-actions instead", goos)
}

// checkOS refuses to run the local runner where it cannot work, before it touches anything.
func checkOS() error { return SupportedOS(runtime.GOOS) }
