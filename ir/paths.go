package ir

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// relPath checks that rel is a relative path that stays inside base (named in messages, e.g.
// "the profile directory") and returns it cleaned, with forward slashes; otherwise it says what is
// wrong and how to fix it.
func relPath(rel, base string) (clean, problem, hint string) {
	switch {
	case rel == "":
		return "", "is empty", "give a path"
	case strings.ContainsRune(rel, 0):
		return "", "contains a NUL byte", "remove it"
	case strings.Contains(rel, `\`):
		return "", `uses \ as a path separator`, "write " + strings.ReplaceAll(rel, `\`, "/")
	case path.IsAbs(rel) || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "":
		return "", "is absolute", "write it relative to " + base
	}
	clean = path.Clean(rel)
	switch {
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "", "leads out of " + base, "keep every path inside " + base
	case clean == ".":
		return "", "names " + base + " itself", "name a file inside it"
	}
	return clean, "", ""
}

// resolveInside stats rel under dir and checks that, after following symlinks, it is still inside
// dir. It returns the file info of the target, or a problem: missing, or escaping via a symlink.
func resolveInside(dir, rel string) (fs.FileInfo, string) {
	full := filepath.Join(dir, filepath.FromSlash(rel))
	info, err := os.Stat(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "does not exist"
		}
		return nil, err.Error()
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, err.Error()
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err.Error()
	}
	if !within(root, real) {
		return nil, "is a symlink leading out of the profile directory"
	}
	return info, ""
}

// within reports whether target is root or below it (both already free of symlinks).
func within(root, target string) bool {
	r, err := filepath.Rel(root, target)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// osFS is the profile directory as an fs.FS.
func osFS(root string) fs.FS { return os.DirFS(root) }
