package substrates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The ledger is how the writer knows which files it generated, and with which bytes, so that it
// can tell its own unedited files from a person's work: it deletes and overwrites only the
// former. One ledger per target lets several targets share an output directory.

// ledgerEntry is one generated file as the ledger records it.
type ledgerEntry struct {
	SHA256 string `json:"sha256"`
	Mode   string `json:"mode"`
}

// ledger is a decoded ledger or pending journal.
type ledger struct {
	Comment string                 `json:"//"`
	Target  string                 `json:"target"`
	Files   map[string]ledgerEntry `json:"files"`
}

const pendingSuffix = ".pending.json"

func ledgerPath(target string) string  { return ledgerDir + "/" + target + ".json" }
func journalPath(target string) string { return ledgerDir + "/" + target + pendingSuffix }

// ledgerRow is one file as encodeLedger writes it.
type ledgerRow struct {
	path, hash, mode string
}

// encodeLedger writes a ledger by hand, one file a line, so that the same Output gives the same
// bytes and a ledger diff in review shows one line per changed file. rows must be sorted by path.
func encodeLedger(target string, rows []ledgerRow) []byte {
	var b bytes.Buffer
	b.Grow(128 + len(rows)*(len(`    "": {"sha256": "", "mode": "0644"},`)+64+40))
	b.WriteString("{\n  \"//\": ")
	b.WriteString(jsonString("DO NOT EDIT. Written by autonomy compile: the files it generated for target " + target + ", with their sha256."))
	b.WriteString(",\n  \"target\": ")
	b.WriteString(jsonString(target))
	b.WriteString(",\n  \"files\": {")
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.WriteString(jsonString(r.path))
		b.WriteString(`: {"sha256": "`)
		b.WriteString(r.hash)
		b.WriteString(`", "mode": "`)
		b.WriteString(r.mode)
		b.WriteString(`"}`)
	}
	if len(rows) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

// decodeLedger parses a ledger and checks every entry, because the writer deletes what a ledger
// lists: a tampered ledger naming "../x" must not reach os.Remove.
func decodeLedger(data []byte, target string) (*ledger, error) {
	var l ledger
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, err
	}
	if l.Target != target {
		return nil, fmt.Errorf("it records target %q, not %q", l.Target, target)
	}
	var bad []string
	for p, e := range l.Files {
		switch {
		case pathProblem(p) != "":
			bad = append(bad, fmt.Sprintf("%q: %s", p, pathProblem(p)))
		case !isHash(e.SHA256):
			bad = append(bad, fmt.Sprintf("%q: sha256 is not 64 lowercase hex digits", p))
		case e.Mode != "0644" && e.Mode != "0755":
			bad = append(bad, fmt.Sprintf("%q: mode %q is neither 0644 nor 0755", p, e.Mode))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, errors.New(strings.Join(bad, "; "))
	}
	if l.Files == nil {
		l.Files = map[string]ledgerEntry{}
	}
	return &l, nil
}

// state is what the ledger directory says about an output directory, for one target.
type state struct {
	// dirExists and genExists say whether .autonomy and .autonomy/generated exist (as real
	// directories: anything else is a conflict).
	dirExists, genExists bool
	// own is the target's ledger and journal its pending journal; nil when absent.
	own, journal *ledger
	// ownBytes is the ledger as on disk, so an unchanged one is not rewritten.
	ownBytes []byte
	// others maps a path to the other targets whose ledger or journal lists it, with the hash
	// each recorded.
	others map[string][]claim
}

// claim is another target's record of a path.
type claim struct {
	target, hash string
}

// listed reports whether the target's ledger or journal lists p.
func (s *state) listed(p string) bool {
	for _, l := range []*ledger{s.own, s.journal} {
		if l != nil {
			if _, ok := l.Files[p]; ok {
				return true
			}
		}
	}
	return false
}

// known reports whether hash is what the target's ledger or journal recorded for p: the file is as
// autonomy wrote it, or as an interrupted install left it.
func (s *state) known(p, hash string) bool {
	return s.own != nil && s.own.Files[p].SHA256 == hash || s.journal != nil && s.journal.Files[p].SHA256 == hash
}

// recorded lists every path the target's ledger or journal lists, sorted.
func (s *state) recorded() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range []*ledger{s.own, s.journal} {
		if l == nil {
			continue
		}
		for p := range l.Files {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ownersOther names the other targets that claim p, sorted, for a conflict message.
func (s *state) ownersOther(p string) string {
	var names []string
	for i, c := range s.others[p] {
		if i == 0 || c.target != s.others[p][i-1].target {
			names = append(names, fmt.Sprintf("%q", c.target))
		}
	}
	if len(names) == 1 {
		return "target " + names[0]
	}
	return "targets " + strings.Join(names, ", ")
}

// readState reads the ledgers and journals in dir without following a symbolic link. Problems
// that block a safe write (the ledger directory is a link, a ledger is corrupt) come back as
// conflicts; I/O failures as the error.
func readState(dir, target string) (*state, []Conflict, error) {
	st := &state{others: map[string][]claim{}}
	var conflicts []Conflict
	for _, d := range []string{".autonomy", ledgerDir} {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d)))
		if errors.Is(err, fs.ErrNotExist) {
			return st, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if !fi.IsDir() {
			return st, []Conflict{{Path: d, Problem: "is " + describe(fi.Mode()) + ", not a directory",
				Hint: "autonomy keeps its ledgers in " + ledgerDir + "/; move it away"}}, nil
		}
		if d == ".autonomy" {
			st.dirExists = true
		} else {
			st.genExists = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, ledgerDir))
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		t, pending := strings.TrimSuffix(name, ".json"), false
		if strings.HasSuffix(name, pendingSuffix) {
			t, pending = strings.TrimSuffix(name, pendingSuffix), true
		}
		if targetProblem(t) != "" {
			continue // not a name this writer would have written
		}
		rel := ledgerDir + "/" + name
		if !e.Type().IsRegular() {
			conflicts = append(conflicts, Conflict{Path: rel, Problem: "is " + describe(e.Type()) + ", not a ledger",
				Hint: "move it away; autonomy never follows a link"})
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, err
		}
		l, err := decodeLedger(data, t)
		if err != nil {
			conflicts = append(conflicts, Conflict{Path: rel, Problem: "is not a valid ledger: " + err.Error(),
				Hint: "delete it; autonomy then recognizes its files by their DO NOT EDIT header"})
			continue
		}
		switch {
		case t == target && pending:
			st.journal = l
		case t == target:
			st.own, st.ownBytes = l, data
		default:
			for p, entry := range l.Files {
				st.addClaim(p, t, entry.SHA256)
			}
		}
	}
	return st, conflicts, nil
}

func (s *state) addClaim(p, target, hash string) {
	for _, c := range s.others[p] {
		if c.target == target && c.hash == hash {
			return
		}
	}
	cs := append(s.others[p], claim{target, hash})
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].target != cs[j].target {
			return cs[i].target < cs[j].target
		}
		return cs[i].hash < cs[j].hash
	})
	s.others[p] = cs
}

// describe names a non-regular file type for a conflict message.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a file"
	default:
		return "a special file"
	}
}
