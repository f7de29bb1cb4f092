package substrates

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteOptions says how far Write may go.
type WriteOptions struct {
	// Force overwrites, or deletes, a generated file that was edited by hand. It never touches a
	// file autonomy did not generate, nor one another target generated.
	Force bool
	// DryRun computes the Plan and the conflicts and writes nothing at all.
	DryRun bool
	// LockWait bounds the wait for another process installing into the same directory
	// (DefaultLockWait when zero); Waiting is called once if Write has to wait.
	LockWait time.Duration
	Waiting  func()
}

// Op is what Write does, or would do, to one file.
type Op int

// The operations. The zero Op is none of them, so a Change left unset is visible.
const (
	// Create writes a file that is not on disk.
	Create Op = iota + 1
	// Update rewrites a file whose bytes differ, or only changes its mode.
	Update
	// Delete removes a file autonomy generated before that the Output no longer has.
	Delete
	// Keep leaves a file whose bytes and mode are already right.
	Keep
	// Kept leaves the user's own file, with other content, where the Output has one of
	// Output.Keep.
	Kept
)

// String names the operation as the CLI prints it.
func (o Op) String() string {
	switch o {
	case Create:
		return "create"
	case Update:
		return "update"
	case Delete:
		return "delete"
	case Keep:
		return "unchanged"
	case Kept:
		return "kept"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText makes an Op read as its name in JSON output.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Change is one file of a Plan.
type Change struct {
	// Path is slash-separated and relative to the output directory.
	Path string `json:"path"`
	Op   Op     `json:"op"`
}

// Plan is what Write did, or would do, file by file, sorted by path: one Change for every file of
// the Output and one Delete for every stale file it removes.
type Plan []Change

// Conflict is one file Write refuses to touch, and what the user can do about it.
type Conflict struct {
	// Path is slash-separated and relative to the output directory.
	Path    string `json:"path"`
	Problem string `json:"problem"`
	Hint    string `json:"hint,omitempty"`
}

// ConflictError is every conflict Write found. When Write returns one it has written nothing, so
// the user can fix every file at once and run again.
type ConflictError struct {
	// Dir is the output directory, as the caller named it.
	Dir       string
	Conflicts []Conflict
}

// Error lists the conflicts one a line, sorted, each as "<dir>/<path>: <problem> (<hint>)".
func (e *ConflictError) Error() string {
	lines := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		line := filepath.Join(e.Dir, filepath.FromSlash(c.Path)) + ": " + c.Problem
		if c.Hint != "" {
			line += " (" + c.Hint + ")"
		}
		lines[i] = line
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// The conflict hints. They tell the user the one thing to do, since autonomy will not do it.
const (
	hintHandEdit  = "move your change into the profile, or pass --force to overwrite it"
	hintStaleEdit = "it is no longer generated: move it away, or pass --force to delete it"
	hintOther     = "compile the two targets into different directories"
	hintInTheWay  = "move it away or rename the file in the profile"
	hintLink      = "autonomy never follows a symbolic link; replace it with a real directory or compile into the directory it points to"
)

// Write installs out into dir, the only way any substrate's output reaches a disk. It writes only
// what changed, through a staging directory and atomic renames, and keeps a ledger of what it
// wrote (dir/.autonomy/generated/<target>.json) so that the next run can tell its own unedited
// files, which it may overwrite or delete, from a person's, which it never touches unless Force
// says the person's edit may go (and never at all for a file autonomy did not generate).
//
// Every conflict is collected and returned at once as a *ConflictError, with the Plan of the other
// files; nothing is written then. Any other error is an invalid Output, a missing directory or an
// I/O failure; if an I/O failure happens before the first file is renamed into place the directory
// is left as it was, and after it a pending journal lets the next run recognize the files this one
// installed.
func Write(dir string, out *Output, opts WriteOptions) (Plan, error) {
	if err := Validate(out); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	unlock, err := lockDir(dir, !opts.DryRun, opts.LockWait, opts.Waiting)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, conflicts, err := readState(dir, out.Target)
	if err != nil {
		return nil, fmt.Errorf("reading the ledgers in %s: %w", dir, err)
	}
	if len(conflicts) > 0 {
		// Without the ledgers every generated file would look foreign: report only the cause.
		return nil, &ConflictError{Dir: dir, Conflicts: conflicts}
	}
	pl := &planner{dir: dir, out: out, opts: opts, st: st, disk: newDisk(dir), diskHash: map[string]string{}, kept: map[int]bool{}}
	if err := pl.planFiles(); err != nil {
		return nil, err
	}
	if err := pl.planStale(); err != nil {
		return nil, err
	}
	sort.Slice(pl.plan, func(i, j int) bool { return pl.plan[i].Path < pl.plan[j].Path })
	if len(pl.conflicts) > 0 {
		sort.Slice(pl.conflicts, func(i, j int) bool { return pl.conflicts[i].Path < pl.conflicts[j].Path })
		return pl.plan, &ConflictError{Dir: dir, Conflicts: pl.conflicts}
	}
	if opts.DryRun {
		return pl.plan, nil
	}
	if err := pl.install(); err != nil {
		return nil, err
	}
	return pl.plan, nil
}

// planner decides, file by file, what Write does.
type planner struct {
	dir       string
	out       *Output
	opts      WriteOptions
	st        *state
	disk      *disk
	plan      Plan
	conflicts []Conflict
	// writes are the indexes of the Output files whose bytes go to disk; chmods those whose
	// bytes are right but mode is not; deletes the stale paths to remove.
	writes, chmods []int
	deletes        []string
	// hashes are the sha256 of the Output's files, by index: computed for the install (the
	// ledger records them), not for a dry run, which needs only the few another target claims.
	hashes []string
	// hashed, when set, is closed once hashes are computed (install computes them while it stages).
	hashed chan struct{}
	// diskHash is the hash of every file read, by path, to settle an interrupted install; same
	// lists the Output files found on disk as they are, whose hash is theirs once known.
	diskHash map[string]string
	same     []int
	// kept marks, by index, the Output files left to the user's copy on disk (Output.Keep).
	kept map[int]bool
}

func (pl *planner) conflict(p, problem, hint string) {
	pl.conflicts = append(pl.conflicts, Conflict{Path: p, Problem: problem, Hint: hint})
}

func (pl *planner) add(p string, op Op) { pl.plan = append(pl.plan, Change{Path: p, Op: op}) }

// inTheWay reports, as a conflict, what at or above p keeps a regular file from being there.
func (pl *planner) inTheWay(p string, e entry) bool {
	switch {
	case e.blocker != "" && e.blockMode&fs.ModeSymlink != 0:
		pl.conflict(p, fmt.Sprintf("its parent %q is a symbolic link", e.blocker), hintLink)
	case e.blocker != "":
		pl.conflict(p, fmt.Sprintf("its parent %q is %s, not a directory", e.blocker, describe(e.blockMode)), hintInTheWay)
	case e.exists && e.mode&fs.ModeSymlink != 0:
		pl.conflict(p, "is a symbolic link", "autonomy never follows a symbolic link; move it away")
	case e.exists && !e.mode.IsRegular():
		pl.conflict(p, "is "+describe(e.mode)+" where a file should go", hintInTheWay)
	default:
		return false
	}
	return true
}

// planFiles decides the fate of every file of the Output.
func (pl *planner) planFiles() error {
	for i := range pl.out.Files {
		f := &pl.out.Files[i]
		e, err := pl.disk.lstat(f.Path)
		if err != nil {
			return err
		}
		if pl.inTheWay(f.Path, e) {
			continue
		}
		claims := pl.st.others[f.Path]
		if !e.exists {
			if len(claims) > 0 && !allHash(claims, hashHex(f.Data)) {
				pl.conflict(f.Path, "generated by "+pl.st.ownersOther(f.Path)+" with other content", hintOther)
				continue
			}
			pl.writes = append(pl.writes, i)
			pl.add(f.Path, Create)
			continue
		}
		data, err := pl.disk.read(f.Path)
		if err != nil {
			return err
		}
		if bytes.Equal(data, f.Data) {
			pl.same = append(pl.same, i)
			switch {
			case e.mode.Perm() == f.Mode:
				pl.add(f.Path, Keep) // identical: shared with another target, adopted, or ours
			case len(claims) > 0:
				pl.conflict(f.Path, fmt.Sprintf("generated by %s with mode %s, compiled with %s",
					pl.st.ownersOther(f.Path), modeString(e.mode), modeString(f.Mode)), hintOther)
			default:
				pl.chmods = append(pl.chmods, i)
				pl.add(f.Path, Update)
			}
			continue
		}
		if slices.Contains(pl.out.Keep, f.Path) {
			// The user's file, another target's too or not: left as it is, and not recorded as
			// generated by this one.
			pl.kept[i] = true
			pl.add(f.Path, Kept)
			continue
		}
		if len(claims) > 0 {
			// A file both targets generated with these very bytes (their ledgers say so) is
			// shared: the profile changed, and either target's compile updates it (the other is
			// then out of date until compiled again). Anything else is the other target's.
			if h := hashHex(data); allHash(claims, h) && pl.st.known(f.Path, h) {
				pl.diskHash[f.Path] = h
				pl.writes = append(pl.writes, i)
				pl.add(f.Path, Update)
				continue
			}
			pl.conflict(f.Path, "generated by "+pl.st.ownersOther(f.Path)+" with other content", hintOther)
			continue
		}
		h := hashHex(data)
		pl.diskHash[f.Path] = h
		hdr, hasHeader := ReadHeader(data)
		generated := pl.st.known(f.Path, h) || hasHeader && hdr.Intact
		switch {
		case generated:
		case pl.st.listed(f.Path) || hasHeader:
			if !pl.opts.Force {
				pl.conflict(f.Path, "edited by hand since autonomy generated it", hintHandEdit)
				continue
			}
		default:
			pl.conflict(f.Path, "exists and was not generated by autonomy", hintForeign(f.Path))
			continue
		}
		pl.writes = append(pl.writes, i)
		pl.add(f.Path, Update)
	}
	return nil
}

// hashAll computes the hash of every Output file, on every CPU, for the ledger, and records it
// as the disk's hash of each file found as it is. The Output is only read: several installs may
// write one Output at once.
func (pl *planner) hashAll() {
	files := pl.out.Files
	pl.hashes = make([]string, len(files))
	onEveryCPU(len(files), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pl.hashes[i] = hashHex(files[i].Data)
		}
	})
	for _, i := range pl.same {
		pl.diskHash[pl.out.Files[i].Path] = pl.hashes[i]
	}
}

// planStale decides the fate of every file the ledger lists that the Output no longer has.
func (pl *planner) planStale() error {
	inOutput := make(map[string]bool, len(pl.out.Files))
	for _, f := range pl.out.Files {
		inOutput[f.Path] = true
	}
	for _, p := range pl.st.recorded() {
		if inOutput[p] || len(pl.st.others[p]) > 0 {
			continue // still ours, or another target's to keep: dropped from our ledger only
		}
		e, err := pl.disk.lstat(p)
		if err != nil {
			return err
		}
		if e.blocker != "" || !e.exists || !e.mode.IsRegular() {
			continue // gone, or replaced by something autonomy did not make: not ours to remove
		}
		data, err := pl.disk.read(p)
		if err != nil {
			return err
		}
		h := hashHex(data)
		pl.diskHash[p] = h
		hdr, hasHeader := ReadHeader(data)
		if !pl.st.known(p, h) && !(hasHeader && hdr.Intact) && !pl.opts.Force {
			pl.conflict(p, "edited by hand since autonomy generated it", hintStaleEdit)
			continue
		}
		pl.deletes = append(pl.deletes, p)
		pl.add(p, Delete)
	}
	return nil
}

// hintForeign is the hint for a file autonomy did not generate where the Output has one.
func hintForeign(p string) string {
	return "move it away, rename it in the profile, or keep yours: compile --keep " + p + ", or list it in policy.box.autonomy.keep"
}

// allHash reports whether every claim recorded hash.
func allHash(cs []claim, hash string) bool {
	for _, c := range cs {
		if c.hash != hash {
			return false
		}
	}
	return true
}
