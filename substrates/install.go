package substrates

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
)

// install carries out a plan without conflicts. The order is what makes a crash at any point safe:
// every new file is staged, and all of them are synced at once; then a pending journal records the
// new hashes, synced with its directory; then
// the files are renamed into place; then stale files go; and only then does the ledger change and
// the journal go. A file on disk therefore always matches the ledger or the journal.
func (pl *planner) install() (err error) {
	if len(pl.writes) == 0 && len(pl.chmods) == 0 && len(pl.deletes) == 0 && pl.st.journal == nil {
		pl.hashAll()
		if bytes.Equal(pl.st.ownBytes, encodeLedger(pl.out.Target, pl.ledgerRows())) {
			return nil // nothing to do: do not even touch the ledger's modification time
		}
	} else {
		// The ledger's hashes are needed only once the files are staged: compute them meanwhile.
		hashed := make(chan struct{})
		go func() {
			defer close(hashed)
			pl.hashAll()
		}()
		defer func() { <-hashed }() // an install that fails leaves nothing running behind it
		pl.hashed = hashed
	}
	in := &installer{dir: pl.dir, disk: pl.disk, synced: map[string]bool{}}
	defer func() {
		if in.stage != "" {
			// What is left in the stage is only copies; failing to remove them must not turn a
			// completed install into an error.
			_ = os.RemoveAll(in.stage)
		}
		if err != nil {
			in.undo()
		}
	}()
	if err := pl.prepare(in); err != nil {
		return err
	}
	staged, ledgerFile, err := pl.stage(in)
	if err != nil {
		return err
	}
	if err := pl.place(in, staged); err != nil {
		return err
	}
	return pl.settle(in, ledgerFile)
}

// prepare makes the directories the install writes to and a fresh stage for its copies.
func (pl *planner) prepare(in *installer) error {
	if !pl.st.dirExists {
		if err := in.mkdir(".autonomy"); err != nil {
			return err
		}
	}
	if !pl.st.genExists {
		if err := in.mkdir(ledgerDir); err != nil {
			return err
		}
	}
	// A crash can leave a stage behind; it only ever holds copies of what was being installed.
	if old, err := filepath.Glob(filepath.Join(in.abs(path.Dir(stagePrefix)), path.Base(stagePrefix)+"*")); err == nil {
		for _, dir := range old {
			_ = os.RemoveAll(dir)
		}
	}
	stage, err := os.MkdirTemp(in.abs(path.Dir(stagePrefix)), path.Base(stagePrefix))
	if err != nil {
		return err
	}
	in.stage = stage
	return nil
}

// stage stages every new file and the new ledger, and, when files are written, records their
// hashes in the pending journal. It returns the staged files, in pl.writes' order, and the ledger.
func (pl *planner) stage(in *installer) (staged []string, ledgerFile string, err error) {
	staged, err = pl.stageWrites(in)
	if err != nil {
		return nil, "", err
	}
	if pl.hashed != nil {
		<-pl.hashed
	}
	newLedger := encodeLedger(pl.out.Target, pl.ledgerRows())
	if ledgerFile, err = in.stageFile("ledger", newLedger, 0o644); err != nil {
		return nil, "", err
	}
	if err := in.flush(); err != nil {
		return nil, "", err
	}
	if len(pl.writes) == 0 {
		return staged, ledgerFile, nil
	}
	journal := journalPath(pl.out.Target)
	if pl.st.journal != nil {
		// The new journal replaces the old one, which may be all that vouches for files an
		// interrupted run installed: fold what is on disk into the ledger first.
		settled, err := in.stageFile("settled", encodeLedger(pl.out.Target, pl.settledRows()), 0o644)
		if err == nil {
			err = in.flush()
		}
		if err != nil {
			return nil, "", err
		}
		if err := in.rename(settled, ledgerPath(pl.out.Target)); err != nil {
			return nil, "", err
		}
	}
	journalFile, err := in.stageFile("journal", newLedger, 0o644)
	if err == nil {
		err = in.flush()
	}
	if err != nil {
		return nil, "", err
	}
	if err := in.rename(journalFile, journal); err != nil {
		return nil, "", err
	}
	in.journal = journal
	// The journal vouches for the files about to be placed: it is on disk before the first is.
	in.syncDir(ledgerDir)
	return staged, ledgerFile, nil
}

// place renames the staged files into place (a new directory at once, with every file in it),
// applies the mode changes and removes stale files.
func (pl *planner) place(in *installer, staged []string) error {
	for _, d := range in.trees {
		if err := in.rename(filepath.Join(in.stage, stageTree, filepath.FromSlash(d)), d); err != nil {
			return err
		}
		in.placed = true
		in.disk.parents[d] = parent{mode: fs.ModeDir | 0o755}
	}
	for k, i := range pl.writes {
		if staged[k] == "" {
			continue // placed with its directory
		}
		p := pl.out.Files[i].Path
		if err := in.mkdirParents(p); err != nil {
			return err
		}
		if err := in.rename(staged[k], p); err != nil {
			return err
		}
		in.placed = true
	}
	for _, i := range pl.chmods {
		f := &pl.out.Files[i]
		if err := os.Chmod(in.abs(f.Path), f.Mode); err != nil {
			return err
		}
		in.placed = true
	}
	for _, p := range pl.deletes {
		if err := in.remove(p); err != nil {
			return err
		}
		in.placed = true
	}
	return nil
}

// settle puts the new ledger in place and only then removes the journal.
func (pl *planner) settle(in *installer, ledgerFile string) error {
	in.syncDirs()
	if err := in.rename(ledgerFile, ledgerPath(pl.out.Target)); err != nil {
		return err
	}
	if pl.st.journal != nil || in.journal != "" {
		if err := os.Remove(in.abs(journalPath(pl.out.Target))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	in.synced = map[string]bool{}
	in.syncDir(ledgerDir)
	return nil
}

// ledgerRows lists the Output's files as the ledger records them.
func (pl *planner) ledgerRows() []ledgerRow {
	rows := make([]ledgerRow, 0, len(pl.out.Files))
	for i, f := range pl.out.Files {
		if !pl.kept[i] {
			rows = append(rows, ledgerRow{path: f.Path, hash: pl.hashes[i], mode: modeString(f.Mode)})
		}
	}
	return rows
}

// settledRows is the ledger an interrupted install should have left: for every path the ledger or
// journal lists, the entry that matches what is on disk, the journal's first.
func (pl *planner) settledRows() []ledgerRow {
	var rows []ledgerRow
	for _, p := range pl.st.recorded() {
		h, read := pl.diskHash[p]
		if j, ok := pl.st.journal.Files[p]; ok && read && j.SHA256 == h {
			rows = append(rows, ledgerRow{path: p, hash: j.SHA256, mode: j.Mode})
		} else if pl.st.own != nil {
			if o, ok := pl.st.own.Files[p]; ok {
				rows = append(rows, ledgerRow{path: p, hash: o.SHA256, mode: o.Mode})
			}
		}
	}
	return rows
}

// rename is renameFile, a variable so that tests can make an install fail halfway.
var rename = renameFile

// installer performs the file system operations of an install and remembers enough to undo the
// ones made before any file was placed.
type installer struct {
	dir   string
	disk  *disk
	stage string
	// created are the directories this install made, in order; journal the journal it wrote.
	created []string
	journal string
	// placed says a file in the output directory has been changed: from then on an error leaves
	// everything in place, for the journal to vouch for.
	placed bool
	// dirs are the directories whose entries changed, to sync; synced those synced already.
	dirs   []string
	synced map[string]bool
	// unflushed are the staged files (and directories) not yet synced.
	unflushed []string
	// trees are the new directories staged whole under stage/stageTree, in order; treeDirs the
	// directories made there.
	trees    []string
	treeDirs map[string]bool
}

// stageTree is the stage's copy of the output directory, for the directories an install creates.
const stageTree = "tree"

// newTop is the outermost parent of p that is not in the output directory ("" when all are): no
// directory there was looked at, or it was missing, and only this install made directories since.
func (in *installer) newTop(p string) string {
	for _, d := range parentDirs(p) {
		if pa, ok := in.disk.parents[d]; !ok || pa.missing {
			return d
		}
	}
	return ""
}

// stageWrites stages the files of pl.writes and returns the staged path of each, "" for one staged
// in the stage's tree (placed with its new directory). The directories of the trees are made
// first, in order; then the files are created on every CPU: none is durable before flush, nor
// renamed into place before it, so the order they are created in does not matter. A failure is
// the first one in pl.writes' order, as when they were staged one by one.
func (pl *planner) stageWrites(in *installer) ([]string, error) {
	staged := make([]string, len(pl.writes))
	names := make([]string, len(pl.writes))
	for k, i := range pl.writes {
		p := pl.out.Files[i].Path
		if d := in.newTop(p); d != "" {
			// Its directory is new: staged in a copy of the tree, placed with the directory.
			if err := in.mkTreeDirs(d, p); err != nil {
				return nil, err
			}
			names[k] = filepath.Join(stageTree, filepath.FromSlash(p))
			continue
		}
		names[k] = strconv.Itoa(k)
		staged[k] = filepath.Join(in.stage, names[k])
	}
	errs := make([]error, len(names))
	onEveryCPU(len(names), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			f := &pl.out.Files[pl.writes[k]]
			if err := createFile(filepath.Join(in.stage, names[k]), f.Data, f.Mode); err != nil {
				errs[k] = fmt.Errorf("staging %s: %w", names[k], err)
				return // the files after it in this range are not needed: the first failure is
			}
		}
	})
	for k, name := range names {
		if errs[k] != nil {
			return nil, errs[k]
		}
		in.unflushed = append(in.unflushed, filepath.Join(in.stage, name))
	}
	return staged, nil
}

// mkTreeDirs makes the directories of the stage's tree that p, whose directory top is new, goes in.
func (in *installer) mkTreeDirs(top, p string) error {
	if in.treeDirs == nil {
		in.treeDirs = map[string]bool{}
	}
	if !in.treeDirs[top] {
		in.trees = append(in.trees, top)
		// Its parents exist in the output directory; in the stage they only hold it.
		if err := os.MkdirAll(filepath.Join(in.stage, stageTree, filepath.FromSlash(path.Dir(top))), 0o755); err != nil {
			return fmt.Errorf("staging %s: %w", top, err)
		}
	}
	for _, d := range parentDirs(p) {
		if len(d) < len(top) || in.treeDirs[d] {
			continue
		}
		full := filepath.Join(in.stage, stageTree, filepath.FromSlash(d))
		if err := os.Mkdir(full, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("staging %s: %w", d, err)
		}
		in.treeDirs[d] = true
		in.unflushed = append(in.unflushed, full) // its entries are part of the install
	}
	return nil
}

func (in *installer) abs(p string) string { return filepath.Join(in.dir, filepath.FromSlash(p)) }

// stageFile writes one file into the staging directory with its exact mode (whatever the umask).
// It is not durable until flush: nothing staged may be renamed into place before.
func (in *installer) stageFile(name string, data []byte, mode fs.FileMode) (string, error) {
	p := filepath.Join(in.stage, name)
	if err := createStaged(p, data, mode); err != nil {
		return "", fmt.Errorf("staging %s: %w", name, err)
	}
	in.unflushed = append(in.unflushed, p)
	return p, nil
}

// flush makes every file staged since the last flush durable, so that the rename that installs
// one never exposes a partial file: a few are synced each, many at once (flushStaged).
func (in *installer) flush() error {
	err := syncStaged(in.stage, in.unflushed)
	in.unflushed = in.unflushed[:0]
	return err
}

// rename moves a staged file to p, relative to the output directory.
func (in *installer) rename(staged, p string) error {
	if err := rename(staged, in.abs(p)); err != nil {
		return err
	}
	in.dirs = append(in.dirs, path.Dir(p))
	return nil
}

// mkdir creates one directory, remembering it so a failed install can remove it again.
func (in *installer) mkdir(p string) error {
	if err := os.Mkdir(in.abs(p), 0o755); err != nil {
		return err
	}
	in.created = append(in.created, p)
	in.disk.parents[p] = parent{mode: fs.ModeDir | 0o755}
	in.dirs = append(in.dirs, path.Dir(p))
	return nil
}

// mkdirParents creates the missing parents of p. Planning made sure that every parent that exists
// is a real directory.
func (in *installer) mkdirParents(p string) error {
	for _, d := range parentDirs(p) {
		if pa, ok := in.disk.parents[d]; ok && !pa.missing {
			continue
		}
		if err := in.mkdir(d); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes a stale file, then the directories its removal left empty, up to but never
// including the output directory.
func (in *installer) remove(p string) error {
	if err := os.Remove(in.abs(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	d := path.Dir(p)
	for ; d != "."; d = path.Dir(d) {
		if os.Remove(in.abs(d)) != nil {
			break // not empty (or not ours to judge): stop climbing
		}
	}
	in.dirs = append(in.dirs, d)
	return nil
}

// undo takes back what a failed install added that nothing needs: the directories it created
// that are still empty, and, when no file was placed yet, its journal, so that the output
// directory is as it was. os.Remove leaves a directory that is not empty.
func (in *installer) undo() {
	if in.journal != "" && !in.placed {
		_ = os.Remove(in.abs(in.journal))
	}
	for i := len(in.created) - 1; i >= 0; i-- {
		_ = os.Remove(in.abs(in.created[i]))
	}
}

// syncDirs makes the renames and removals durable by syncing each directory they changed once.
func (in *installer) syncDirs() {
	in.synced = map[string]bool{}
	sort.Strings(in.dirs)
	for _, d := range in.dirs {
		in.syncDir(d)
	}
	in.dirs = in.dirs[:0]
}

// syncDir syncs one directory. It is best effort: some systems cannot sync a directory, and the
// files themselves were synced before they were renamed.
func (in *installer) syncDir(d string) {
	if in.synced[d] {
		return
	}
	in.synced[d] = true
	f, err := os.Open(in.abs(d))
	if err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
}
