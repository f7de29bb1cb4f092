// Package mergecheck decides what a proposal may contain: the checks the trusted side applies
// to an agent's commits before they move toward a protected branch, shared by the gh-actions
// propose job (substrates/ghactions/effect) and the local runner's code flow
// (substrates/local/codeflow.go), so both refuse the same things for the same reasons.
//
// A proposal is a line of ordinary commits on the target branch: a merge commit is refused
// outright, because what a merge changes itself (an "evil merge", or a side branch's commits
// taken in by it) is listed by no per-commit diff. The paths it changes are the union of what
// every commit changes and of the net difference of the trees, both read NUL-separated so that
// no path is quoted (git quotes a name with a byte outside ASCII, which would slip past a glob);
// every check (the workflows, the installation, the scope, the human-required paths) reads that
// union. What protects a path (the workflows, the installation, the human-required paths) matches
// it in any case and Unicode normalization, as macOS and Windows write it, while a scope matches
// exactly; and a path that such a file system would write over another path or folder of the tree
// is refused (Collisions). What finally lands is checked once more against the branch it lands on.
package mergecheck

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Git runs git with args in the repository the checks read and returns its output as it is.
type Git func(args ...string) ([]byte, error)

// WorkflowGlob is what no agent may change: the workflows decide what every job may do.
const WorkflowGlob = ".github/workflows/**"

// RefusedPaths are what no proposal may change, and why: what decides what every job may do
// (the workflows, the local actions they use, which run from the proposal's branch when its
// checks are dispatched there), and the installation's data, which the trusted side reads its
// rules from (the human-required paths, the maintainers, the capabilities).
var RefusedPaths = []struct{ Glob, Why string }{
	{WorkflowGlob, "it changes workflows, which decide what every job may do; no agent may"},
	{".github/actions/**", "it changes the repository's own actions, which workflows run; no agent may"},
	{".autonomy/**", "it changes the installation (.autonomy/), whose rules the trusted jobs read; no agent may (compile the profile again instead)"},
}

// Changes lists the paths the commits from..to change, sorted, or the reason (and the commits
// or paths at fault) the proposal of actor, holding code:propose with scope ("" for none), is
// refused.
func Changes(git Git, from, to, actor, scope string) (files []string, reason string, bad []string, err error) {
	merges, err := git("rev-list", "--min-parents=2", from+".."+to)
	if err != nil {
		return nil, "", nil, err
	}
	if m := strings.Fields(string(merges)); len(m) > 0 {
		return nil, "it contains merge commits, which hide what they change; a proposal is a line of commits on the default branch (rebase it instead of merging)", m, nil
	}
	// Every path any commit touches, not only the net change: a commit that edits a workflow
	// and a later one that reverts it still went through the workflow.
	each, err := git("log", "--no-renames", "--name-only", "-z", "--format=", from+".."+to)
	if err != nil {
		return nil, "", nil, err
	}
	net, err := git("diff", "--no-renames", "--name-only", "-z", from, to)
	if err != nil {
		return nil, "", nil, err
	}
	files = Union(NulPaths(each), NulPaths(net))
	if reason, bad = Vet(files, actor, scope); reason == "" {
		reason, bad, err = collide(git, files, to)
	}
	return files, reason, bad, err
}

// Landed adds to files what head changes from base, the branch it lands on, and vets the union
// again.
func Landed(git Git, files []string, base, head, actor, scope string) ([]string, string, []string, error) {
	net, err := git("diff", "--no-renames", "--name-only", "-z", base, head)
	if err != nil {
		return nil, "", nil, err
	}
	files = Union(files, NulPaths(net))
	reason, bad := Vet(files, actor, scope)
	if reason == "" {
		reason, bad, err = collide(git, files, head)
	}
	return files, reason, bad, err
}

// Vet is why a proposal changing files is refused ("" when it is not), with the paths at fault.
// The refused paths match in any case and Unicode normalization (MatchFold), the scope exactly.
func Vet(files []string, actor, scope string) (string, []string) {
	var odd []string
	for _, f := range files {
		if strings.ContainsFunc(f, unicode.IsControl) {
			odd = append(odd, strconv.Quote(f))
		}
	}
	if len(odd) > 0 {
		return "it names files with control characters (a line break, a tab…), which no glob check can be trusted with", odd
	}
	for _, r := range RefusedPaths {
		if bad := Matching(files, []string{r.Glob}); len(bad) > 0 {
			return r.Why, bad
		}
	}
	if scope == "" {
		return "", nil
	}
	var outside []string
	for _, f := range files {
		if !Match(scope, f) {
			outside = append(outside, f)
		}
	}
	if len(outside) > 0 {
		return fmt.Sprintf("%s may propose changes to %s only, and it changes", actor, scope), outside
	}
	return "", nil
}

// Match reports whether a repository path matches a glob of human_required_paths or a scope,
// exactly as spelled (MatchFold matches every spelling a case-insensitive file system reads as
// the same): * and ? match within one path segment, ** any number of segments; DIR/** matches DIR itself
// too (a file or a link put where the folder was). Every character of a path counts, a line
// break included.
func Match(glob, path string) bool {
	if dir, ok := strings.CutSuffix(glob, "/**"); ok && Match(dir, path) {
		return true
	}
	var re strings.Builder
	re.WriteString("(?s)^")
	for i := 0; i < len(glob); i++ {
		switch ch := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"):
			re.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			re.WriteString(".*")
			i++
		case ch == '*':
			re.WriteString("[^/]*")
		case ch == '?':
			re.WriteString("[^/]")
		default:
			// A byte at a time: a character outside ASCII is its bytes, in order.
			re.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	re.WriteString("$")
	ok, _ := regexp.MatchString(re.String(), path)
	return ok
}

// Matching lists the paths that any of globs protects (Protects): the globs it is given protect
// paths (human_required_paths, the governing documents, RefusedPaths).
func Matching(paths, globs []string) []string {
	var out []string
	for _, p := range paths {
		for _, g := range globs {
			if Protects(g, p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Protects reports whether a glob that protects paths covers path: the glob matches it in any
// case and Unicode normalization (MatchFold), or matches a folder it is in. A glob reads as
// .gitignore and CODEOWNERS read theirs: with a "/" at its start or in its middle it is read from
// the repository's root ("/SECURITY.md", "docs/*.md"), without one it matches at any depth
// ("CODEOWNERS", "*.pem", "docs/"); a trailing "/" names a folder, and a folder protects what it
// holds ("docs/*" protects docs/a/b.md). Reading more into a glob than Match does only ever
// protects more: a scope, which grants, is matched with Match alone.
func Protects(glob, path string) bool {
	g := strings.TrimPrefix(glob, "./")
	anchored := g != glob || strings.HasPrefix(g, "/")
	for strings.Contains(g, "//") {
		g = strings.ReplaceAll(g, "//", "/")
	}
	g = strings.TrimSuffix(strings.TrimPrefix(g, "/"), "/")
	if g == "" {
		return glob != "" // "/" or "./": the whole repository
	}
	if !anchored && !strings.Contains(g, "/") {
		g = "**/" + g
	}
	for i := range len(path) {
		if path[i] == '/' && MatchFold(g, path[:i]) {
			return true
		}
	}
	return MatchFold(g, path)
}

// Unread says why a glob of human_required_paths would protect nothing it seems to ("" when it
// does as written): Protects reads no character class, brace list, negation or escape.
func Unread(glob string) string {
	switch {
	case strings.TrimSpace(glob) == "":
		return "it is empty"
	case strings.HasPrefix(glob, "!"):
		return "a negation (!) is not read: the glob would protect paths that begin with \"!\""
	case strings.ContainsAny(glob, "[]"):
		return "a character class ([...]) is not read: the glob would protect only paths spelled with the brackets"
	case braceList(glob):
		return "a brace list ({a,b}) is not read: the glob would protect only paths spelled with the braces"
	case strings.Contains(glob, "\\"):
		return "a backslash is not read as an escape or a folder separator: the glob would protect only paths spelled with it"
	}
	return ""
}

// braceList reports whether glob holds a brace list as shells and many glob libraries read one:
// "{", then a "," before the next "}".
func braceList(glob string) bool {
	for {
		i := strings.IndexByte(glob, '{')
		if i < 0 {
			return false
		}
		glob = glob[i+1:]
		if end := strings.IndexByte(glob, '}'); end > 0 && strings.Contains(glob[:end], ",") {
			return true
		}
	}
}

// NulPaths splits git's -z output into paths, as they are (an empty record is no path).
func NulPaths(out []byte) []string {
	var paths []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			paths = append(paths, string(f))
		}
	}
	return paths
}

// Union is the sorted set of the paths of both lists.
func Union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
