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
	// Writable keeps the whole filesystem writable, as Wrap does, under Binds (which may then
	// make a path read-only), instead of read-only.
	Writable bool
	// Aliases make a path writable again at a second place inside the jail's own private folder
	// (Alias.At under JailsDir, which the jail mounts empty): a path the Binds made read-only
	// stays writable there, for the trusted processes the substrate tells the second place to.
	Aliases []Alias
	// PidNS runs the command in a process namespace of its own, with its own /proc (bwrap
	// --unshare-pid): it sees and signals no process outside, and none of its processes outlives
	// it (a nested bubblewrap could not remount /proc: NoUserNS goes with it).
	PidNS bool
	// Hide are paths the command does not see: a folder is mounted empty in their place (a
	// tmpfs, writable, gone with the command), a file is replaced by an empty one it cannot
	// write. A path that does not exist or is not absolute is skipped; a link is hidden where it
	// leads.
	Hide []string
	// Keep are paths inside a hidden folder that stay visible, as they are: bound back into it
	// once it is hidden (a session's workspace in a login folder, the agent's own program). A
	// path inside no hidden folder changes nothing.
	Keep []string
}

// Bind is one path of a Confinement.
type Bind struct {
	Path  string
	Write bool
}

// Alias is a path of a Confinement bound writable at a second place, At.
type Alias struct {
	Path, At string
}

// args are bwrap's arguments for c (the whole filesystem as it is when c is nil).
func (c *Confinement) args() []string {
	if c == nil {
		return []string{"--dev-bind", "/", "/"}
	}
	out := []string{"--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev"}
	if c.Writable {
		out = []string{"--dev-bind", "/", "/"} // /proc with it
	}
	if c.PidNS {
		out = append(out, "--unshare-pid", "--proc", "/proc")
	} else if !c.Writable {
		out = append(out, "--bind", "/proc", "/proc")
	}
	// Hidden first, what is kept bound back, then the Binds (a folder of the runner inside a
	// hidden one keeps its own read-only or writable bind).
	hidden := hideArgs(c.Hide)
	out = append(out, hidden...)
	if kept := keepArgs(hidden, c.Keep); len(kept) > 0 {
		// What is hidden inside a path bound back is hidden again: the bind shows it as it is.
		out = append(out, kept...)
		var inner []string
		for _, h := range c.Hide {
			real, err := filepath.EvalSymlinks(h)
			if err != nil {
				continue
			}
			for i := 2; i < len(kept); i += 3 {
				if rel, err := filepath.Rel(kept[i], real); err == nil && filepath.IsLocal(rel) && rel != "." {
					inner = append(inner, h)
					break
				}
			}
		}
		out = append(out, hideArgs(inner)...)
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

// hideArgs are bwrap's arguments that hide paths (Confinement.Hide).
func hideArgs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || filepath.Clean(real) == "/" {
			continue
		}
		fi, err := os.Stat(real)
		switch {
		case err != nil:
		case fi.IsDir():
			out = append(out, "--tmpfs", real)
		default:
			out = append(out, "--ro-bind", "/dev/null", real)
		}
	}
	return out
}

// keepArgs are bwrap's arguments that bind each of keep that exists back into the hidden folder
// it is inside (hidden holds hideArgs' arguments: each "--tmpfs" is followed by a folder).
func keepArgs(hidden, keep []string) []string {
	var out []string
	for _, k := range keep {
		real, err := filepath.EvalSymlinks(k)
		if err != nil || !filepath.IsAbs(k) {
			continue
		}
		for i := 0; i+1 < len(hidden); i++ {
			if hidden[i] != "--tmpfs" {
				continue
			}
			if rel, err := filepath.Rel(hidden[i+1], real); err == nil && filepath.IsLocal(rel) && rel != "." {
				out = append(out, "--bind", real, real)
				break
			}
		}
	}
	return out
}

// aliasArgs are bwrap's arguments for c's Aliases, once the folder of the jails (parent) is
// mounted empty: an alias whose At is not in it, or whose Path does not exist, is skipped.
func (c *Confinement) aliasArgs(parent string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, a := range c.Aliases {
		if _, err := os.Stat(a.Path); err != nil || !filepath.IsAbs(a.Path) || filepath.Dir(filepath.Clean(a.At)) != parent {
			continue
		}
		out = append(out, "--bind", a.Path, a.At)
	}
	return out
}
