package ir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
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

// maxLinks bounds the symlinks followed to resolve one path, as the kernel does (ELOOP).
const maxLinks = 40

// pathChecker resolves paths inside the profile directory, once each (thousands of actors commonly
// share one behavior), without ever looking at a file outside it: each component is examined with
// Lstat, and a symlink is followed only after its target has been checked to stay inside.
type pathChecker struct {
	root  string // the profile directory, free of symlinks
	err   error
	cache map[string]pathResult
}

// pathResult is what a path resolved to: its cleaned form and its file info, or a problem and a
// hint to fix it.
type pathResult struct {
	clean   string
	info    fs.FileInfo
	problem string
	hint    string
}

func newPathChecker(dir string) *pathChecker {
	root, err := filepath.EvalSymlinks(dir)
	return &pathChecker{root: root, err: err, cache: map[string]pathResult{}}
}

func (c *pathChecker) check(rel string) pathResult {
	if res, ok := c.cache[rel]; ok {
		return res
	}
	res := c.resolve(rel)
	c.cache[rel] = res
	return res
}

func (c *pathChecker) resolve(rel string) pathResult {
	clean, problem, hint := relPath(rel, "the profile directory")
	if problem != "" {
		return pathResult{problem: problem, hint: hint}
	}
	if c.err != nil {
		return pathResult{clean: clean, problem: "cannot be checked: " + c.err.Error()}
	}
	res := c.walk(clean)
	res.clean = clean
	return res
}

// walk resolves clean component by component from the root.
func (c *pathChecker) walk(clean string) pathResult {
	const escape = "leads out of the profile directory through a symlink"
	const escapeHint = "copy the file into the profile instead of linking to it"
	pending := strings.Split(clean, "/")
	cur, links := c.root, 0
	var info fs.FileInfo
	for len(pending) > 0 {
		part := pending[0]
		pending = pending[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			if !within(c.root, cur) {
				return pathResult{problem: escape, hint: escapeHint}
			}
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			res := pathResult{problem: "does not exist", hint: "create it in the profile directory, or fix the path"}
			if len(pending) == 0 {
				if near := nearestEntry(cur, part); near != "" {
					r, _ := filepath.Rel(c.root, filepath.Join(cur, near))
					res.hint = fmt.Sprintf("did you mean %q?", filepath.ToSlash(r))
				}
			}
			return res
		}
		if err != nil {
			return pathResult{problem: "cannot be read: " + err.Error()}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if len(pending) > 0 && !fi.IsDir() {
				return pathResult{problem: "does not exist (" + part + " is not a directory)", hint: "fix the path"}
			}
			cur, info = next, fi
			continue
		}
		if links++; links > maxLinks {
			return pathResult{problem: "has a symlink loop", hint: "remove the loop, or copy the file into the profile"}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return pathResult{problem: "cannot be read: " + err.Error()}
		}
		if filepath.IsAbs(target) {
			r, err := filepath.Rel(c.root, filepath.Clean(target))
			if err != nil || !within(c.root, filepath.Clean(target)) {
				return pathResult{problem: escape, hint: escapeHint}
			}
			cur, target = c.root, r
		}
		pending = append(strings.Split(filepath.ToSlash(target), "/"), pending...)
	}
	if info == nil {
		return pathResult{problem: "names the profile directory itself", hint: "name a file inside it"}
	}
	return pathResult{info: info}
}

// nearestEntry suggests an entry of dir (inside the profile) when name is a plausible typo of it;
// never name itself, which was looked for and found wanting.
func nearestEntry(dir, name string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Name() != name {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return nearest(name, names)
}

// caseVariant returns the path of the entry of folder dir (relative to the profile, already
// checked) whose name differs from name only in case (skills/w/skill.md for SKILL.md), when dir
// has no entry named name exactly, or "". A disk that ignores case finds name all the same.
func (c *pathChecker) caseVariant(dir, name string) string {
	if c.err != nil {
		return ""
	}
	entries, err := os.ReadDir(filepath.Join(c.root, filepath.FromSlash(dir)))
	if err != nil {
		return ""
	}
	variant := ""
	for _, e := range entries {
		switch {
		case e.Name() == name:
			return ""
		case variant == "" && strings.EqualFold(e.Name(), name):
			variant = path.Join(dir, e.Name())
		}
	}
	return variant
}

// within reports whether target is root or below it (both already free of symlinks).
func within(root, target string) bool {
	r, err := filepath.Rel(root, target)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
