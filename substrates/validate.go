package substrates

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// ledgerDir is where the writer keeps its ledgers, relative to the output directory. No substrate
// may write there: a file of its Output would overwrite a ledger.
const ledgerDir = ".autonomy/generated"

// stagePrefix begins the writer's staging folders (stage-<random>); every install removes any it
// finds, so no file of an Output may be there.
const stagePrefix = ".autonomy/stage-"

// Validate checks that out is something the writer can install safely and deterministically: a
// target usable as a ledger file name, and files whose paths stay inside the output directory and
// out of .git and the ledger directory, unique, sorted, with a mode of 0644 or 0755, and JSON
// bodies a header can be inserted into. A failure is a bug in the substrate, so the error names
// every bad file at once rather than the first.
func Validate(out *Output) error { return validate(out, true) }

// validate is Validate, of the files' bodies too when bodies is set (else they are a Lister's
// list, with no Data).
func validate(out *Output, bodies bool) error {
	var problems []string
	add := func(p, format string, args ...any) {
		problems = append(problems, strconv.Quote(p)+": "+fmt.Sprintf(format, args...))
	}
	if msg := targetProblem(out.Target); msg != "" {
		problems = append(problems, "target "+strconv.Quote(out.Target)+": "+msg)
	}
	files := make(map[string]bool, len(out.Files))
	folded := make(map[string]string, len(out.Files))
	for i, f := range out.Files {
		if msg := pathProblem(f.Path); msg != "" {
			add(f.Path, "%s", msg)
		}
		if files[f.Path] {
			add(f.Path, "listed more than once")
		} else if other, dup := folded[strings.ToLower(f.Path)]; dup {
			add(f.Path, "differs from %q only in case; they are one file on a case-insensitive file system", other)
		}
		files[f.Path] = true
		folded[strings.ToLower(f.Path)] = f.Path
		if i > 0 && f.Path < out.Files[i-1].Path {
			add(f.Path, "out of order: it sorts before %q, which precedes it", out.Files[i-1].Path)
		}
		if f.Mode != 0o644 && f.Mode != 0o755 {
			add(f.Path, "mode %#o; a generated file is 0644, or 0755 when executable", uint32(f.Mode))
		}
		switch f.Header {
		case NoHeader, HashHeader:
		case JSONHeader:
			if bodies && !jsonBodyOK(f.Data) {
				add(f.Path, `a JSONHeader file must start with "{\n" and have a member for the header to precede`)
			}
		default:
			add(f.Path, "unknown header style %d", f.Header)
		}
	}
	// A file cannot also be a directory holding another file of the Output.
	for _, f := range out.Files {
		for d := path.Dir(f.Path); d != "." && d != "/" && d != ""; d = path.Dir(d) {
			if files[d] {
				add(f.Path, "is inside %q, which is a file of the output too", d)
				break
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("invalid output of target %q (a bug in the substrate):\n\t%s", out.Target, strings.Join(problems, "\n\t"))
}

// pathProblem says what makes p unusable as an output path, or "" when it is fine. The rules keep
// every write inside the output directory on every operating system, out of git's own directory
// (git never tracks a .git at any depth) and out of the writer's ledgers.
func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.IndexByte(p, 0) >= 0:
		return "path contains a NUL byte"
	case strings.Contains(p, `\`):
		return "path contains a backslash; paths are slash-separated"
	case strings.HasPrefix(p, "/"):
		return "absolute path; paths are relative to the output directory"
	case p == ".":
		return `path "." names the output directory itself`
	case path.Clean(p) != p:
		return fmt.Sprintf("path is not clean (path.Clean gives %q)", path.Clean(p))
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return `path leaves the output directory through ".."`
		}
		if strings.EqualFold(c, ".git") {
			return "path is inside a .git directory, which belongs to git"
		}
	}
	lower := strings.ToLower(p)
	if lower == ".autonomy" || lower == ledgerDir || strings.HasPrefix(lower, ledgerDir+"/") {
		return "path is the writer's ledger directory " + ledgerDir
	}
	if strings.HasPrefix(lower, stagePrefix) {
		return "path is inside the writer's staging folders " + stagePrefix + "*"
	}
	return ""
}

// targetProblem says what makes a target name unusable as a ledger file name, or "" when it is
// fine. A name ending in ".pending" would collide with another target's pending journal.
func targetProblem(t string) string {
	if t == "" {
		return "empty target name"
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_' || c == '.')
		if !ok {
			return "a target name is letters, digits and inner '-', '_' or '.'"
		}
	}
	if strings.HasSuffix(t, ".pending") {
		return `a target name cannot end in ".pending"`
	}
	return ""
}

// modeString renders a mode as the ledger and drift reports write it: "0644".
func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", uint32(m.Perm())) }
