package playbook

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/source"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// Trial makes the shadow overlay slug active in one installation only: in the installation dir's
// own copy of the overlay package (the one its data folder's WeaveFile names), its status set to
// active and its updated_at to now, that package's _index.md regenerated and the step appended to
// its _log.md. The installation's sessions are then woven with it: they are the candidate arm of
// promote's measurement. The profile is not touched, and the overlay is still shadow everywhere
// else; compiling the installation again with --force installs the profile's package, ending the
// trial (without it, compile refuses to overwrite the files the trial changed). The
// persona lock still holds: the weave skips an overlay that touches it, trial or not.
func Trial(dir, dataDir, slug string, now time.Time, out io.Writer) error {
	cfgFile := filepath.Join(dir, filepath.FromSlash(dataDir), WeaveFile)
	data, err := source.ReadFile(cfgFile, 1<<20)
	if err != nil {
		return refuse(nil, "%s installs no overlay package (%s: %s): compile a profile that has one into it", dir, cfgFile, source.Reason(err))
	}
	var wc WeaveConfig
	if err := json.Unmarshal(data, &wc); err != nil || wc.Package == "" || strings.Contains(wc.Package, "..") || filepath.IsAbs(wc.Package) {
		return refuse(nil, "%s is not a weaving config (compile again)", cfgFile)
	}
	e := &Evolver{Profile: &ir.Profile{Dir: dir}, Dir: filepath.Join(dir, filepath.FromSlash(wc.Package)), Rel: wc.Package, Now: now.UTC(), Out: out}
	return e.locked(func() error {
		pkg, err := e.load()
		if err != nil {
			return err
		}
		o := find(pkg, slug)
		switch {
		case o == nil:
			return refuse(nil, "the installed package %s has no overlay %q (compile the profile holding it into %s first)", e.Rel, slug, dir)
		case o.Status.Value != "shadow":
			return refuse(nil, "overlay %q is %s in %s: a trial is for a shadow overlay", slug, o.Status.Value, e.Rel)
		}
		text, n, err := e.restatus(o, "active")
		if err != nil {
			return err
		}
		file := e.rel(o.File)
		line := fmt.Sprintf("%s trial %s (%s): shadow → active in this installation only, for the candidate arm of promote; the profile still holds it at shadow", e.stamp(), slug, file)
		e.say("%s", line)
		return e.commit(write{files: map[string][]byte{o.File: text}, overlays: overlaysOf(pkg, map[string]*overlay.Overlay{o.File: n}), log: []string{line}})
	})
}
