package local

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// gitSnapshot is what, in the git directory an agent's sandbox leaves writable (it commits
// there), runs code under the user's own git: hooks, the config (core.hooksPath, core.fsmonitor,
// aliases, filter and diff drivers, core.sshCommand…), the per-worktree configs, info/attributes
// (which names filter drivers), and the same in submodules' git directories. The supervisor
// keeps this copy in its own memory from before the agent starts and, once its process group is
// gone, puts back whatever changed, keeping each changed copy aside for the user to look at (the
// session fails naming them). The runner's own git runs with hooks and fsmonitor off; this is
// for yours.
type gitSnapshot struct {
	dir   string // the common git directory
	files map[string]gitFile
	// worktrees are the linked worktrees' folders (worktrees/NAME): another session's worktree
	// added or removed meanwhile is the runner's, not a change to put back.
	worktrees map[string]bool
}

// gitFile is one guarded entry: a regular file's bytes and mode, or a link's target.
type gitFile struct {
	data []byte
	mode fs.FileMode
	link string
	isLn bool
}

// guardedGit reports whether the slash path p, relative to a git directory, is one the guard
// keeps.
func guardedGit(p string) bool {
	switch p {
	case "config", "config.worktree", "info/attributes", "hooks":
		return true
	case "commondir", "gitdir", "objects/info/alternates", "objects/info/http-alternates":
		// Where git finds the repository's config, refs and objects: a commondir planted in the
		// main git directory makes git read another directory's config (its remotes, its
		// fsmonitor) while config itself is untouched; alternates add object stores.
		return true
	}
	if strings.HasPrefix(p, "hooks/") {
		return true
	}
	if parts := strings.Split(p, "/"); len(parts) == 3 && parts[0] == "worktrees" && (parts[2] == "config.worktree" || parts[2] == "config") {
		return true
	}
	if rest, ok := strings.CutPrefix(p, "modules/"); ok {
		base := path.Base(rest)
		return base == "config" || base == "config.worktree" || strings.HasSuffix(rest, "/info/attributes") ||
			strings.HasSuffix(rest, "/hooks") || strings.Contains(rest, "/hooks/")
	}
	return false
}

// skipGitDir says whether a folder of the git directory holds nothing guarded (and may be large).
func skipGitDir(p string) bool {
	switch path.Base(p) {
	case "objects", "refs", "logs", "lfs":
		return true
	}
	return false
}

// worktreeOf is NAME for a path under worktrees/NAME/, else "".
func worktreeOf(p string) string {
	if parts := strings.SplitN(p, "/", 3); len(parts) == 3 && parts[0] == "worktrees" {
		return parts[1]
	}
	return ""
}

// readGit reads every guarded entry under the git directory dir, following no link.
func readGit(dir string) (map[string]gitFile, map[string]bool, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	files, wts := map[string]gitFile{}, map[string]bool{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // gone meanwhile, or unreadable: not ours to judge
		}
		if p == "." {
			return nil
		}
		if d.IsDir() {
			if p == "objects" || p == "objects/info" {
				return nil // for its alternates alone (guardedGit): no other entry of objects is read
			}
			if parts := strings.Split(p, "/"); len(parts) == 2 && parts[0] == "worktrees" {
				wts[parts[1]] = true
			}
			top := strings.Split(p, "/")[0]
			if guardedGit(p) || top == "hooks" || top == "worktrees" || top == "modules" || top == "info" {
				if skipGitDir(p) {
					return fs.SkipDir
				}
				return nil
			}
			return fs.SkipDir
		}
		if !guardedGit(p) {
			return nil
		}
		rel := filepath.FromSlash(p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := root.Readlink(rel)
			if err != nil {
				return nil
			}
			files[p] = gitFile{link: target, isLn: true}
		case d.Type().IsRegular():
			fi, err := root.Lstat(rel)
			if err != nil {
				return nil
			}
			data, err := root.ReadFile(rel)
			if err != nil {
				return nil
			}
			files[p] = gitFile{data: data, mode: fi.Mode().Perm()}
		default:
			files[p] = gitFile{mode: d.Type()} // a pipe, a device: kept as a change if it appears
		}
		return nil
	})
	return files, wts, err
}

// snapshotGit reads the guarded entries of the git directory dir.
func snapshotGit(dir string) (*gitSnapshot, error) {
	files, wts, err := readGit(dir)
	if err != nil {
		return nil, err
	}
	return &gitSnapshot{dir: dir, files: files, worktrees: wts}, nil
}

func (f gitFile) equal(g gitFile) bool {
	return f.isLn == g.isLn && f.link == g.link && f.mode == g.mode && bytes.Equal(f.data, g.data)
}

// restore puts back every guarded entry that changed, was added or was removed since the
// snapshot, keeping the changed or added copy under aside (same relative path, mode 0600, never
// executable), and returns their paths, sorted.
func (g *gitSnapshot) restore(aside string) ([]string, error) {
	now, wts, err := readGit(g.dir)
	if err != nil {
		return nil, err
	}
	changed, placeholders := g.changes(now, wts)
	if len(changed)+len(placeholders) == 0 {
		return nil, nil
	}
	root, err := os.OpenRoot(g.dir)
	if err != nil {
		return changed, err
	}
	defer root.Close()
	var errs []error
	for _, p := range placeholders {
		if err := root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cannot remove %s: %w", p, err))
		}
	}
	if len(changed) == 0 {
		return nil, errors.Join(errs...)
	}
	errs = append(errs, g.takeAway(root, aside, changed, now)...)
	errs = append(errs, g.putBack(root, changed)...)
	return changed, errors.Join(errs...)
}

// changes lists, sorted, the guarded entries that differ now from the snapshot (added, changed
// or removed), and apart the placeholders a sandbox added; an entry of a worktree the runner
// added or removed meanwhile is not one.
func (g *gitSnapshot) changes(now map[string]gitFile, wts map[string]bool) (changed, placeholders []string) {
	ours := func(p string) bool { // not in a worktree the runner added or removed meanwhile
		w := worktreeOf(p)
		return w == "" || g.worktrees[w] && wts[w]
	}
	for p, f := range now {
		was, ok := g.files[p]
		switch {
		case ok && was.equal(f) || !ours(p):
		case !ok && placeholder(f):
			placeholders = append(placeholders, p)
		default:
			changed = append(changed, p)
		}
	}
	for p := range g.files {
		if _, ok := now[p]; !ok && ours(p) {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	return changed, placeholders
}

// takeAway removes what is at each changed path now, keeping a copy under aside first.
func (g *gitSnapshot) takeAway(root *os.Root, aside string, changed []string, now map[string]gitFile) []error {
	var errs []error
	// The folder kept aside is made anew and written through a root: the agent may have put a
	// link where it goes, to have the copies (its own text) written outside its sandbox.
	kept, err := freshDir(aside)
	if err != nil {
		errs = append(errs, fmt.Errorf("cannot make %s to keep the changed copies: %w", aside, err))
	} else {
		defer kept.Close()
	}
	for _, p := range changed {
		cur, ok := now[p]
		if !ok {
			continue
		}
		if kept != nil {
			if err := keepAside(kept, p, cur); err != nil {
				errs = append(errs, err)
			}
		}
		if err := root.RemoveAll(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cannot remove %s: %w", p, err))
		}
	}
	return errs
}

// putBack writes back what each changed path held at the snapshot.
func (g *gitSnapshot) putBack(root *os.Root, changed []string) []error {
	var errs []error
	for _, p := range changed {
		was, ok := g.files[p]
		if !ok {
			continue
		}
		rel := filepath.FromSlash(p)
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			errs = append(errs, fmt.Errorf("cannot restore %s: %w", p, err))
			continue
		}
		var err error
		switch {
		case was.isLn:
			err = root.Symlink(was.link, rel)
		case was.mode.IsRegular() || was.mode&fs.ModeType == 0:
			err = root.WriteFile(rel, was.data, was.mode)
			if err == nil {
				err = root.Chmod(rel, was.mode) // WriteFile's mode is masked by the umask
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot restore %s: %w", p, err))
		}
	}
	return errs
}

// placeholder reports whether an entry the agent's run added is an empty, non-executable file:
// what a sandbox (Claude Code's bubblewrap) creates as the mount point that keeps a missing
// config.worktree read-only. It runs nothing and says nothing, so it is removed without failing
// the session; any content, mode bit x or link is a change.
func placeholder(f gitFile) bool {
	return !f.isLn && f.mode.IsRegular() && f.mode&0o111 == 0 && len(f.data) == 0
}

// keepAside saves what an entry held before it is put back: a file's bytes, a link's target;
// as a new file, mode 0600, under the root kept.
func keepAside(kept *os.Root, p string, f gitFile) error {
	rel := filepath.FromSlash(p)
	if err := kept.MkdirAll(filepath.Dir(rel), 0o700); err != nil {
		return fmt.Errorf("cannot keep %s aside: %w", p, err)
	}
	data := f.data
	if f.isLn {
		data = []byte("a symbolic link to " + f.link + "\n")
	}
	out, err := kept.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("cannot keep %s aside: %w", p, err)
	}
	_, err = out.Write(data)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot keep %s aside: %w", p, err)
	}
	return nil
}
