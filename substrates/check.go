package substrates

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
)

// DriftKind is how a file on disk differs from a compile.
type DriftKind int

// The kinds of drift.
const (
	// Missing is a compiled file that is not on disk.
	Missing DriftKind = iota + 1
	// Changed is a compiled file whose bytes or mode on disk differ.
	Changed
	// Stale is a file the target generated before that the compile no longer produces.
	Stale
)

// String names the kind as `autonomy check` prints it.
func (k DriftKind) String() string {
	switch k {
	case Missing:
		return "missing"
	case Changed:
		return "changed"
	case Stale:
		return "stale"
	}
	return "DriftKind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText makes a DriftKind read as its name in JSON output.
func (k DriftKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Drift is one file where the disk disagrees with a compile.
type Drift struct {
	// Path is slash-separated and relative to the output directory.
	Path string    `json:"path"`
	Kind DriftKind `json:"kind"`
	// Diff shows a Changed file's difference: a unified diff from disk to compile, a mode
	// line, or why the file could not be compared.
	Diff string `json:"diff,omitempty"`
	// Edited is set on a Changed file edited by hand since autonomy generated it, which a
	// compile overwrites only with --force (its header no longer matches its body, and the
	// ledger does not know its bytes).
	Edited bool `json:"edited,omitempty"`
}

// Check compares out with what is in dir, as `autonomy check` does in CI to fail a pull request
// whose generated files drift from the profile. It reads the target's ledger to find stale files,
// and never follows a symbolic link below dir: a link is itself drift, since a compile would
// refuse to write through it. A file whose header names the profile by another path but whose
// body is the same is not drift (a compile from an identical copy of the profile), nor is a file
// of out.Keep that is on disk. The drifts are sorted by path; none means dir is up to date.
func Check(dir string, out *Output) ([]Drift, error) {
	if err := Validate(out); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	// A compile installing into dir right now would show as drift: wait for it (shared lock).
	unlock, err := lockDir(dir, false, 0, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, conflicts, err := readState(dir, out.Target)
	if err != nil {
		return nil, fmt.Errorf("reading the ledgers in %s: %w", dir, err)
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Dir: dir, Conflicts: conflicts}
	}
	d := newDisk(dir)
	var drifts []Drift
	inOutput := make(map[string]bool, len(out.Files))
	for _, f := range out.Files {
		inOutput[f.Path] = true
		e, err := d.lstat(f.Path)
		if err != nil {
			return nil, err
		}
		if why := unreadable(e); why != "" {
			drifts = append(drifts, Drift{Path: f.Path, Kind: Changed, Diff: why})
			continue
		}
		if !e.exists || e.blocker != "" {
			drifts = append(drifts, Drift{Path: f.Path, Kind: Missing})
			continue
		}
		if slices.Contains(out.Keep, f.Path) {
			continue // the user's own file, kept (policy.box.autonomy.keep, compile --keep)
		}
		data, err := d.read(f.Path)
		if err != nil {
			return nil, err
		}
		if e.mode.Perm() == f.Mode && sameButSource(data, f.Data) {
			continue
		}
		diff := UnifiedDiff(f.Path, data, f.Data)
		if e.mode.Perm() != f.Mode {
			diff = fmt.Sprintf("mode %s on disk, %s compiled\n", modeString(e.mode), modeString(f.Mode)) + diff
		}
		if diff != "" {
			hdr, hasHeader := ReadHeader(data)
			generated := st.known(f.Path, hashHex(data)) || hasHeader && hdr.Intact
			edited := !generated && (st.listed(f.Path) || hasHeader)
			drifts = append(drifts, Drift{Path: f.Path, Kind: Changed, Diff: diff, Edited: edited})
		}
	}
	for _, p := range st.recorded() {
		if inOutput[p] || len(st.others[p]) > 0 {
			continue // still generated, or still another target's
		}
		e, err := d.lstat(p)
		if err != nil {
			return nil, err
		}
		if e.blocker == "" && e.exists && e.mode.IsRegular() {
			drifts = append(drifts, Drift{Path: p, Kind: Stale})
		}
	}
	stale, err := orphans(d, out, inOutput, st)
	if err != nil {
		return nil, err
	}
	drifts = append(drifts, stale...)
	sort.Slice(drifts, func(i, j int) bool { return drifts[i].Path < drifts[j].Path })
	return drifts, nil
}

// orphans finds stale files the ledger does not list (it was lost, or never committed): a file
// beside the generated ones, in a folder holding a header file of the Output, whose own intact
// header names the same profile, is a leftover of an earlier compile. Folders are not walked
// recursively and links are not followed.
func orphans(d *disk, out *Output, inOutput map[string]bool, st *state) ([]Drift, error) {
	source := ""
	dirs := map[string]bool{}
	for _, f := range out.Files {
		if f.Header == NoHeader {
			continue
		}
		if h, ok := ReadHeader(f.Data); ok && source == "" {
			source = h.Source
		}
		dirs[path.Dir(f.Path)] = true
	}
	if source == "" {
		return nil, nil
	}
	var drifts []Drift
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		if e, err := d.lstat(dir); err != nil || dir != "." && (!e.exists || e.blocker != "" || !e.mode.IsDir()) {
			continue
		}
		entries, err := os.ReadDir(d.abs(dir))
		if err != nil {
			continue
		}
		for _, ent := range entries {
			p := path.Join(dir, ent.Name())
			if inOutput[p] || st.listed(p) || len(st.others[p]) > 0 || !ent.Type().IsRegular() {
				continue
			}
			data, err := d.read(p)
			if err != nil {
				return nil, err
			}
			if h, ok := ReadHeader(data); ok && h.Intact && h.Source == source {
				drifts = append(drifts, Drift{Path: p, Kind: Stale})
			}
		}
	}
	return drifts, nil
}

// unreadable says why the file at e cannot be compared without leaving the directory or reading
// something that is not a file, or "" when it can be (or is simply absent).
func unreadable(e entry) string {
	switch {
	case e.blocker != "" && e.blockMode&fs.ModeSymlink != 0:
		return fmt.Sprintf("its parent %q is a symbolic link on disk; autonomy does not follow it\n", e.blocker)
	case e.exists && e.mode&fs.ModeSymlink != 0:
		return "a symbolic link on disk, a file compiled; autonomy does not follow it\n"
	case e.exists && !e.mode.IsRegular():
		return describe(e.mode) + " on disk, a file compiled\n"
	}
	return ""
}
