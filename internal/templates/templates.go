// Package templates scaffolds a new profile from one of the bundled example profiles (the root
// package's Profiles), for autonomy init: it lists them with a one-line summary, and writes one
// into a new directory, all at once, with its editor schema beside it.
package templates

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy"
	"github.com/autonomyhq/autonomy/ir"
)

// Default is the template init uses when none is named: the smallest fleet, one agent on cron.
const Default = "hello"

// SchemaFile is the editor schema init writes beside ir.yml, which the profile's
// yaml-language-server modeline names.
const SchemaFile = "ir.schema.json"

// Template is one bundled profile.
type Template struct {
	Name string `json:"name"`
	// Summary is the first phrase of the profile's opening comment.
	Summary string `json:"summary"`
	// Targets are the targets the profile declares.
	Targets []string `json:"targets"`
}

// profileFS is the bundled profiles, rooted at profiles/.
func profileFS() fs.FS {
	sub, err := fs.Sub(autonomy.Profiles, "profiles")
	if err != nil {
		panic(err) // the embed pattern names profiles: it is always there
	}
	return sub
}

// List returns every bundled profile, sorted by name.
func List() []Template {
	fsys := profileFS()
	entries, _ := fs.ReadDir(fsys, ".")
	var out []Template
	for _, e := range entries {
		data, err := fs.ReadFile(fsys, path.Join(e.Name(), "ir.yml"))
		if !e.IsDir() || err != nil {
			continue
		}
		out = append(out, Template{Name: e.Name(), Summary: summary(e.Name(), data), Targets: targets(data)})
	}
	return out
}

// Lookup returns the template named name.
func Lookup(name string) (Template, bool) {
	for _, t := range List() {
		if t.Name == name {
			return t, true
		}
	}
	return Template{}, false
}

// Names lists the templates' names.
func Names() []string {
	var names []string
	for _, t := range List() {
		names = append(names, t.Name)
	}
	return names
}

// summary is the phrase after "# NAME — " on the profile's first comment line, up to its first
// ": " or ". ".
func summary(name string, data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "# "+name+" — ")
		if !ok {
			continue
		}
		for _, sep := range []string{": ", ". "} {
			rest, _, _ = strings.Cut(rest, sep)
		}
		return strings.TrimSuffix(strings.TrimSpace(rest), ".")
	}
	return ""
}

var targetsLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^targets:[ \t]*\[([^\]\n]*)\][ \t]*$`) })

// targets reads the profile's one-line targets list.
func targets(data []byte) []string {
	m := targetsLine().FindSubmatch(data)
	if m == nil {
		return nil
	}
	var out []string
	for _, t := range strings.Split(string(m[1]), ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

var modeline = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^# yaml-language-server: \$schema=.*$`) })

// Options says how Write tailors the template.
type Options struct {
	// Target, when set, makes it the profile's only target; it must be one the template declares.
	Target string
}

// Write scaffolds the template named name into dir, which must not exist or be empty: every file
// of the bundled profile, the modeline pointing at SchemaFile, written beside it, and the
// targets narrowed to opts.Target. The files are written into a temporary directory beside dir
// and moved into place at once, so a failure leaves nothing behind. It returns the files
// written, slash-separated and relative to dir, sorted.
func Write(name, dir string, opts Options) ([]string, error) {
	t, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("no template %q (%s)", name, ir.Suggest(name, Names()))
	}
	if opts.Target != "" && !slices.Contains(t.Targets, opts.Target) {
		return nil, fmt.Errorf("template %s declares the targets %s, not %q (%s)", name, strings.Join(t.Targets, ", "), opts.Target, ir.Suggest(opts.Target, t.Targets))
	}
	if err := emptyOrAbsent(dir); err != nil {
		return nil, err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(parent, ".autonomy-init-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage) // gone once renamed; else what a failure left
	files, err := writeTree(sub(name), stage, opts)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.Rename(stage, dir); err != nil {
		return nil, err
	}
	return files, nil
}

func sub(name string) fs.FS {
	s, _ := fs.Sub(profileFS(), name) // name is a listed directory
	return s
}

// emptyOrAbsent refuses a dir that holds anything, or is not a directory.
func emptyOrAbsent(dir string) error {
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !info.IsDir():
		return fmt.Errorf("%s exists and is not a directory: name a new directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: name a new directory (init never overwrites a file)", dir)
	}
	return nil
}

// writeTree copies every file of fsys into stage, tailoring ir.yml, and adds SchemaFile.
func writeTree(fsys fs.FS, stage string, opts Options) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if p == "ir.yml" {
			data = tailor(data, opts)
		}
		files = append(files, p)
		return writeFile(stage, p, data)
	})
	if err != nil {
		return nil, err
	}
	files = append(files, SchemaFile)
	slices.Sort(files)
	return files, writeFile(stage, SchemaFile, ir.JSONSchema())
}

// tailor points the modeline at SchemaFile (the bundled one names ../../docs, which is not there
// once copied) and narrows the targets.
func tailor(data []byte, opts Options) []byte {
	data = modeline().ReplaceAllLiteral(data, []byte("# yaml-language-server: $schema="+SchemaFile))
	if opts.Target != "" {
		data = targetsLine().ReplaceAllLiteral(data, []byte("targets: ["+opts.Target+"]"))
	}
	return data
}

// writeFile writes data at p below root; a script (#!) is executable.
func writeFile(root, p string, data []byte) error {
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if bytes.HasPrefix(data, []byte("#!")) {
		mode = 0o755
	}
	return os.WriteFile(full, data, mode)
}
