package egress

import (
	"os"
	"path/filepath"
)

// Confinement is what a substrate takes from the agent beyond the network: the filesystem, made
// read-only but for what Binds make writable again, and the user namespaces a nested sandbox
// would need.
type Confinement struct {
	// Binds, applied in order over a read-only root, make a path writable (Write) or read-only
	// again (a folder of the runner inside a writable home). A path that does not exist, is not
	// absolute, or is the root itself is skipped. /dev and /proc stay as they are.
	Binds []Bind
	// NoUserNS runs the command in a user namespace of its own in which it cannot make another
	// (bwrap --unshare-user --disable-userns): no nested sandbox, and no namespace in which it
	// holds every capability.
	NoUserNS bool
	// PidNS runs the command in a process namespace of its own, with its own /proc (bwrap
	// --unshare-pid): it sees and signals no process outside, and none of its processes outlives
	// it (a nested bubblewrap could not remount /proc: NoUserNS goes with it).
	PidNS bool
}

// Bind is one path of a Confinement.
type Bind struct {
	Path  string
	Write bool
}

// args are bwrap's arguments for c (the whole filesystem as it is when c is nil).
func (c *Confinement) args() []string {
	if c == nil {
		return []string{"--dev-bind", "/", "/"}
	}
	out := []string{"--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--bind", "/proc", "/proc"}
	if c.PidNS {
		out = append(out[:len(out)-3], "--unshare-pid", "--proc", "/proc")
	}
	for _, b := range c.Binds {
		if _, err := os.Stat(b.Path); err != nil || !filepath.IsAbs(b.Path) || filepath.Clean(b.Path) == "/" {
			continue
		}
		flag := "--ro-bind"
		if b.Write {
			flag = "--bind"
		}
		out = append(out, flag, b.Path, b.Path)
	}
	if c.NoUserNS {
		out = append(out, "--unshare-user", "--disable-userns")
	}
	return out
}
