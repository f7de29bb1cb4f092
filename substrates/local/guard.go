package local

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/autonomyhq/autonomy/ir/resolved"
)

// installSnapshot is what autonomy installed under .autonomy/ (the launcher configs, schedule,
// behaviors, the manifest), as it was when a session whose workspace is the installation root
// started. The sandboxed agent of such a session can write those files, and the runner later
// runs them outside any sandbox (an actor's command and prelaunch, a script behavior): the
// supervisor keeps this copy in its own memory, out of the agent's reach, and puts back what the
// agent changed when the session ends.
type installSnapshot map[string]installedFile // slash path → what it held

type installedFile struct {
	data   []byte
	mode   os.FileMode
	absent bool // not there: one the agent adds is removed
}

// snapshotInstall reads the installed files under .autonomy/ the manifest lists, and the
// manifest itself.
func (in *Install) snapshotInstall() (installSnapshot, error) {
	var m struct {
		Files map[string]string `json:"files"`
	}
	if err := readJSON(in.Dir, ManifestPath, &m); err != nil {
		return nil, err
	}
	// The weaving config is read by every skill session: one the agent adds must go again.
	paths := []string{ManifestPath, dataDir + "/" + resolved.WeaveFile}
	for p := range m.Files {
		if strings.HasPrefix(p, dataDir+"/") && filepath.IsLocal(filepath.FromSlash(p)) {
			paths = append(paths, p)
		}
	}
	root, err := os.OpenRoot(in.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	snap := installSnapshot{}
	for _, p := range paths {
		rel := filepath.FromSlash(p)
		fi, err := root.Lstat(rel)
		if errors.Is(err, os.ErrNotExist) {
			snap[p] = installedFile{absent: true}
			continue
		}
		if err != nil || !fi.Mode().IsRegular() {
			continue // not autonomy's file: nothing to put back
		}
		data, err := root.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		snap[p] = installedFile{data: data, mode: fi.Mode().Perm()}
	}
	return snap, nil
}

// restore puts back every file that changed since the snapshot (rewritten, removed, or replaced
// by a link or a folder) and returns their paths, sorted. It follows no link out of the
// installation.
func (snap installSnapshot) restore(in *Install) ([]string, error) {
	root, err := os.OpenRoot(in.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var changed []string
	var errs []error
	for p, want := range snap {
		rel := filepath.FromSlash(p)
		fi, err := root.Lstat(rel)
		if want.absent {
			if err == nil {
				changed = append(changed, p)
				if err := root.RemoveAll(rel); err != nil {
					errs = append(errs, fmt.Errorf("cannot remove %s: %w", p, err))
				}
			}
			continue
		}
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == want.mode {
			if cur, err := root.ReadFile(rel); err == nil && bytes.Equal(cur, want.data) {
				continue
			}
		}
		changed = append(changed, p)
		if err == nil {
			if err := root.RemoveAll(rel); err != nil {
				errs = append(errs, fmt.Errorf("cannot restore %s: %w", p, err))
				continue
			}
		}
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			errs = append(errs, fmt.Errorf("cannot restore %s: %w", p, err))
			continue
		}
		if err := root.WriteFile(rel, want.data, want.mode); err != nil {
			errs = append(errs, fmt.Errorf("cannot restore %s: %w", p, err))
		}
	}
	if len(changed) > 0 {
		in.forgetActors() // a copy read while the agent ran is not kept
	}
	sort.Strings(changed)
	return changed, errors.Join(errs...)
}

// putBack puts back what the agent of session id changed of what autonomy installed (snap) and of
// what the user's git runs (gsnap), either nil when not guarded, and returns what it says of each
// (nothing when nothing changed).
func (in *Install) putBack(id string, snap installSnapshot, gsnap *gitSnapshot) []string {
	var tampered []string
	if snap != nil {
		changed, err := snap.restore(in)
		if len(changed) > 0 || err != nil {
			msg := fmt.Sprintf("the agent changed files autonomy installed, which the runner runs outside the sandbox; they were put back: %s (edit the profile and compile instead)", strings.Join(changed, ", "))
			if err != nil {
				msg = fmt.Sprintf("the agent changed files autonomy installed, and not all could be put back: %v (compile again before running anything)", err)
			}
			tampered = append(tampered, msg)
		}
	}
	if gsnap != nil {
		aside := in.Path(StateDir + "/tampered/" + id)
		changed, err := gsnap.restore(aside)
		if len(changed) > 0 || err != nil {
			for i, p := range changed {
				changed[i] = filepath.Join(gsnap.dir, filepath.FromSlash(p))
			}
			msg := fmt.Sprintf("the git directory's hooks or config, which your own git runs, changed while the agent ran; they were put back: %s (the changed copies are in %s)", strings.Join(changed, ", "), aside)
			if err != nil {
				msg = fmt.Sprintf("the git directory's hooks or config, which your own git runs, changed while the agent ran, and not all could be put back: %v (check %s before you run git there; the changed copies are in %s)", err, gsnap.dir, aside)
			}
			tampered = append(tampered, msg)
		}
	}
	return tampered
}
