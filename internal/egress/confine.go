package egress

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Confinement is what a substrate takes from the agent beyond the network: the filesystem, made
// read-only but for what Binds make writable again, and the user namespaces a nested sandbox
// would need.
type Confinement struct {
	// Binds, applied in order over a read-only root, make a path writable (Write) or read-only
	// again (a folder of the runner inside a writable home). A path that does not exist, is not
	// absolute, or is the root itself is skipped. /dev and /proc stay as they are.
	Binds []Bind
	// NoUserNS runs the command in a user namespace of its own in which it cannot make another,
	// with no capability (bwrap --unshare-user --disable-userns --cap-drop ALL): no nested
	// sandbox, no namespace in which it holds every capability (a runner run as root would
	// otherwise keep them all in the new one, and could unmount what hides a login), and no
	// way into another of the user's processes' view of the filesystem (/proc/PID/root, which
	// shows what the jail hides, is out of reach from a user namespace of its own).
	NoUserNS bool
	// RootFileCaps, for a process run as root, drops every capability but those over files'
	// owners and modes (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID: it still writes any
	// file, changes owners, unpacks an archive keeping them): it cannot unmount what hides a path,
	// nor read the filesystem or the environment of a process of the same user namespace holding
	// more capabilities than it (/proc/PID/root, /proc/PID/environ: the kernel refuses a caller
	// whose capabilities are not a superset of the target's; a process in a user namespace root
	// made is another matter), nor make a namespace of its own with a sandbox in it, nor change
	// the kernel's settings (kernelPaths). It is still root: with a writable filesystem it can
	// have code run as root outside the jail (a program the kernel runs, /sbin/request-key), so
	// this narrows, and does not contain, a root process (docs/local.md). A process not run as
	// root has none of these capabilities anyway (bubblewrap runs it in a user namespace of its
	// own), and nothing changes for it.
	RootFileCaps bool
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
	// tmpfs, writable, gone with the command); a file's folder is mounted empty and its other
	// entries bound back as they are, so the file is not there at all (an empty file bound over
	// it would be detached by the kernel once the operator's tool renames a new file over it,
	// showing the new one), but in the root, a temporary directory, a folder of Keep or Binds (or
	// inside one) or a folder of more than maxSiblings entries, where an empty file it cannot
	// write replaces it. A path that does not exist or is
	// not absolute is skipped; a link is hidden where it leads.
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

// kernelPaths are the kernel's settings and switches, read-only in a jail of RootFileCaps run as
// root: through the host's /proc bound writable, such a process wrote
// /proc/sys/kernel/core_pattern (a mode check, no capability), and the kernel then ran a program
// of its choosing as root, outside every namespace, at its next crash (attack33). Not in other
// jails: a /proc with any of its parts covered is one in which the kernel refuses a nested sandbox
// its own /proc (bwrap: "Can't mount proc"), which the presets' sandboxes mount, and a process
// not run as root cannot write them anyway. bwrap's own /proc (PidNS) makes /proc/sys read-only
// already.
var kernelPaths = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/sys"}

// kernelArgs are bwrap's arguments that make kernelPaths read-only (one missing is skipped).
func kernelArgs() []string {
	var out []string
	for _, p := range kernelPaths {
		out = append(out, "--ro-bind-try", p, p)
	}
	return out
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
	rootFileCaps := c.RootFileCaps && os.Geteuid() == 0 && !c.NoUserNS
	if rootFileCaps && !c.PidNS {
		out = append(out, kernelArgs()...)
	}
	// Hidden first, what is kept bound back, then the Binds (a folder of the runner inside a
	// hidden one keeps its own read-only or writable bind).
	out = append(out, hideArgs(c.Hide, c.Writable, c.worked())...)
	if kept := keptPaths(c.Hide, c.Keep); len(kept) > 0 {
		for _, k := range kept {
			out = append(out, "--bind", k, k)
		}
		// What is hidden inside a path bound back is hidden again: the bind shows it as it is.
		var inner []string
		for _, h := range c.Hide {
			if real, err := filepath.EvalSymlinks(h); err == nil && insideAny(real, kept) {
				inner = append(inner, h)
			}
		}
		out = append(out, hideArgs(inner, c.Writable, c.worked())...)
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
	if rootFileCaps {
		out = append(out, "--cap-drop", "ALL")
		for _, name := range []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID"} {
			out = append(out, "--cap-add", name)
		}
	}
	if c.NoUserNS {
		out = append(out, "--unshare-user", "--disable-userns", "--cap-drop", "ALL")
	}
	return out
}

// maxSiblings is the most entries a folder holding a hidden file may have for the jail to mount
// it empty and bind them back (Confinement.Hide).
const maxSiblings = 512

// worked are the real paths the command works in (its Keep and Binds): a hidden file's folder
// inside one, or one of them, is not mounted empty (its entries would be mount points, which the
// command could neither replace nor remove, and what it made there would be gone with it).
func (c *Confinement) worked() []string {
	var out []string
	for _, p := range c.Keep {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, real)
		}
	}
	for _, b := range c.Binds {
		if real, err := filepath.EvalSymlinks(b.Path); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// hideArgs are bwrap's arguments that hide paths (Confinement.Hide); what they bind back of a
// hidden file's folder is writable when write (the jail's filesystem is). A file whose folder
// is the root, a temporary directory, a folder worked in (or inside one), or a folder too large
// is replaced by an empty file instead.
func hideArgs(paths []string, write bool, worked []string) []string {
	var dirs, files []string // real paths
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
			dirs = append(dirs, real)
		default:
			files = append(files, real)
		}
	}
	var out []string
	byFolder := map[string][]string{}
	for _, f := range files {
		byFolder[filepath.Dir(f)] = append(byFolder[filepath.Dir(f)], f)
	}
	folders := make([]string, 0, len(byFolder))
	for d := range byFolder {
		folders = append(folders, d)
	}
	slices.Sort(folders) // a folder before the folders inside it, which its entries bind back
	for _, folder := range folders {
		hidden := byFolder[folder]
		if slices.Contains(dirs, folder) || insideAny(folder, dirs) {
			continue // hidden with its folder
		}
		entries, err := os.ReadDir(folder)
		if err != nil || !emptiable(folder, len(entries), worked) {
			for _, f := range hidden {
				out = append(out, "--ro-bind", "/dev/null", f)
			}
			continue
		}
		bind := "--ro-bind-try"
		if write {
			bind = "--bind-try"
		}
		out = append(out, "--tmpfs", folder)
		for _, e := range entries {
			path := filepath.Join(folder, e.Name())
			switch {
			case slices.Contains(hidden, path) || slices.Contains(dirs, path) || besideHidden(e.Name(), hidden):
				// not bound back: a hidden folder is mounted empty below
			case e.Type()&fs.ModeSymlink != 0:
				if target, err := os.Readlink(path); err == nil {
					out = append(out, "--symlink", target, path)
				}
			default:
				// -try: an entry gone before the jail starts is left out, not an error.
				out = append(out, bind, path, path)
			}
		}
	}
	for _, d := range dirs {
		out = append(out, "--tmpfs", d)
	}
	return out
}

// besideHidden reports whether name, an entry of a hidden file's folder, is what a tool makes
// beside that file as it replaces it (attack31): its temporary file or lock (NAME.tmp.PID,
// git's NAME.lock: NAME. and anything after it), a backup (NAME~) or an editor's autosave
// (#NAME#). Bound back, such a file becomes the hidden one once renamed over it.
func besideHidden(name string, hidden []string) bool {
	for _, h := range hidden {
		b := filepath.Base(h)
		if strings.HasPrefix(name, b+".") || name == b+"~" || name == "#"+b+"#" {
			return true
		}
	}
	return false
}

// emptiable reports whether the jail may mount folder, holding n entries, empty to hide a file in
// it (hideArgs): not the root (its /dev and /proc), not a temporary directory, not a folder the
// command works in or one inside it, and not one of more than maxSiblings entries.
func emptiable(folder string, n int, worked []string) bool {
	return folder != "/" && n <= maxSiblings && !temporary(folder) && !slices.Contains(worked, folder) && !insideAny(folder, worked)
}

// temporary reports whether dir is a temporary directory every process shares (/tmp, $TMPDIR):
// mounted empty in a jail, it would hide what other processes put there meanwhile.
func temporary(dir string) bool {
	for _, t := range []string{"/tmp", "/var/tmp", os.TempDir()} {
		if real, err := filepath.EvalSymlinks(t); err == nil && real == dir || t == dir {
			return true
		}
	}
	return false
}

// keptPaths are the real paths of keep that exist inside a hidden folder of hide: what is bound
// back once hide is hidden.
func keptPaths(hide, keep []string) []string {
	var folders []string
	for _, h := range hide {
		if real, err := filepath.EvalSymlinks(h); err == nil && filepath.IsAbs(h) {
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				folders = append(folders, real)
			}
		}
	}
	var out []string
	for _, k := range keep {
		if real, err := filepath.EvalSymlinks(k); err == nil && filepath.IsAbs(k) && insideAny(real, folders) {
			out = append(out, real)
		}
	}
	return out
}

// insideAny reports whether path is strictly inside one of dirs.
func insideAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && filepath.IsLocal(rel) && rel != "." {
			return true
		}
	}
	return false
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
