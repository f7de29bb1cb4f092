package ir

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// profilePath checks that rel is a relative path that stays inside the profile directory and
// returns it cleaned, with forward slashes. The message says why it is refused.
func profilePath(rel string) (clean string, problem string) {
	if rel == "" {
		return "", "the path is empty"
	}
	if strings.ContainsRune(rel, 0) {
		return "", "the path contains a NUL byte"
	}
	if strings.Contains(rel, `\`) {
		return "", "use / as the path separator, not \\"
	}
	if path.IsAbs(rel) || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" {
		return "", "the path is absolute; write it relative to the profile directory"
	}
	clean = path.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", "the path leads out of the profile directory"
	}
	if clean == "." {
		return "", "the path names the profile directory itself"
	}
	return clean, ""
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
