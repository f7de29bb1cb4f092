package playbook

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// ErrBusy is the refusal of a step while another holds the package's write lock.
var ErrBusy = errors.New("another autonomy playbook reflect, trial, promote or archive is writing this overlay package")

// logHeader starts a new _log.md.
const logHeader = "# Playbook log\n\n<!-- Appended by autonomy playbook reflect, promote and archive: promotions, archivals and unexpected matches. -->\n\n"

// editFrontmatter rewrites the frontmatter of an overlay file with edit, keeping its body byte
// for byte.
func editFrontmatter(data []byte, edit func(root *yaml.Node)) ([]byte, error) {
	lines := source.Lines(data)
	if !source.HasFrontmatter(lines) {
		return nil, errors.New("the file has no frontmatter")
	}
	end := source.FrontmatterEnd(lines)
	if end < 0 {
		return nil, errors.New("the frontmatter is never closed")
	}
	var yml strings.Builder
	for _, l := range lines[1:end] {
		yml.WriteString(l.Text + "\n")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yml.String()), &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the frontmatter is not a YAML mapping (%v)", err)
	}
	edit(doc.Content[0])
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc.Content[0]); err != nil {
		return nil, err
	}
	_ = enc.Close()
	b.WriteString("---\n")
	for _, l := range lines[end+1:] {
		b.WriteString(l.Text + "\n")
	}
	return b.Bytes(), nil
}

// setKey sets key of a mapping to value, in place when it is there, else at the end.
func setKey(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			value.LineComment = m.Content[i+1].LineComment
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value)
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// setStatus sets an overlay file's status and updated_at (its ttl then counts from now).
func (e *Evolver) setStatus(data []byte, status string) ([]byte, error) {
	return editFrontmatter(data, func(root *yaml.Node) {
		setKey(root, "status", strNode(status))
		setKey(root, "updated_at", strNode(e.stamp()))
	})
}

// write is one step's files: each overlay file's new bytes (by path), the package's overlays
// once they are written, and the lines appended to _log.md.
type write struct {
	files    map[string][]byte
	overlays []*overlay.Overlay
	log      []string
}

// commit writes a step: every file to a temporary file beside it first, then each renamed into
// place, the overlays first, then _log.md, then _index.md (regenerated). A failure before the
// renames leaves the package as it was.
func (e *Evolver) commit(w write) error {
	var made []string // folders made for new overlays, removed again on failure
	var temps []string
	ok := false
	defer func() {
		if ok {
			return
		}
		for _, t := range temps {
			os.Remove(t)
		}
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
	}()
	order := make([]string, 0, len(w.files)+2)
	content := map[string][]byte{}
	for f, data := range w.files {
		order = append(order, f)
		content[f] = data
	}
	if len(w.log) > 0 {
		logFile := filepath.Join(e.Dir, overlay.LogFile)
		have, err := overlay.ReadFile(logFile, 64<<20)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			have = []byte(logHeader)
		case err != nil:
			return fmt.Errorf("%s: %s", logFile, source.Reason(err))
		}
		if len(have) > 0 && !bytes.HasSuffix(have, []byte("\n")) {
			have = append(have, '\n')
		}
		for _, l := range w.log {
			have = append(have, "- "+l+"\n"...)
		}
		order, content[logFile] = append(order, logFile), have
	}
	index := filepath.Join(e.Dir, overlay.IndexFile)
	order, content[index] = append(order, index), overlay.Index(w.overlays)
	for _, f := range order {
		if err := source.CheckRegular(f); err != nil {
			return fmt.Errorf("%s: %s", f, source.Reason(err))
		}
		dirs, err := mkdirs(filepath.Dir(f))
		made = append(made, dirs...)
		if err != nil {
			return err
		}
		if err := e.inside(filepath.Dir(f)); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(f), ".evolve-*.tmp")
		if err != nil {
			return err
		}
		temps = append(temps, tmp.Name())
		_, err = tmp.Write(content[f])
		if err == nil {
			err = tmp.Chmod(0o644)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %v", f, err)
		}
	}
	for i, f := range order {
		if err := os.Rename(temps[i], f); err != nil {
			return fmt.Errorf("writing %s: %v", f, err)
		}
	}
	ok = true
	for _, f := range order {
		e.say("write %s", e.rel(f))
	}
	return nil
}

// inside refuses a folder that leads out of the profile directory through a symlink: nothing is
// written outside the profile.
func (e *Evolver) inside(dir string) error {
	root, err1 := filepath.EvalSymlinks(e.Profile.Dir)
	real, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%s: %v", dir, errors.Join(err1, err2))
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return refuse(nil, "%s leads out of the profile directory (to %s) through a symlink: nothing written; copy what it holds into the package", e.rel(dir), real)
	}
	return nil
}

// mkdirs makes dir and its missing parents, returning those it made, outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append([]string{d}, missing...)
	}
	var made []string
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}

// LockPackage takes the write lock of the overlay package in dir, as each evolve step does while
// it writes; unlock releases it. Held already, it is ErrBusy.
func LockPackage(dir string) (unlock func(), err error) { return lockDir(dir) }

// locked runs step holding the package's write lock (a second step on the same package at the
// same time is refused, ErrBusy, never interleaved); the package folder is made when missing
// (and removed again when the step wrote nothing into it).
func (e *Evolver) locked(step func() error) error {
	made, err := mkdirs(e.Dir)
	if err != nil {
		return err
	}
	defer func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // only when empty: nothing was written
		}
	}()
	unlock, err := lockDir(e.Dir)
	if err != nil {
		return err
	}
	defer unlock() // before the folder is removed, when it was made and nothing was written
	return step()
}
