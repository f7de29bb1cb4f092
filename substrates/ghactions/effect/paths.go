package effect

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// What a proposal may contain. A proposal is a line of ordinary commits on the default branch:
// a merge commit is refused outright, because what a merge changes itself (an "evil merge", or
// a side branch's commits taken in by it) is listed by no per-commit diff. The paths it
// changes are the union of what every commit changes and of the net difference of the trees,
// both read NUL-separated so that no path is quoted (git quotes a name with a byte outside
// ASCII, which would slip past a glob); every check (the workflows, the scope, the
// human-required paths) reads that union. What is finally pushed is checked once more against
// the default branch it lands on.

// proposedFiles lists the paths the commits from..to change, sorted, or the reason (and the
// commits or paths) the proposal is refused.
func (e *Env) proposedFiles(from, to string) (files []string, reason string, bad []string, err error) {
	merges, err := e.gitBytes("rev-list", "--min-parents=2", from+".."+to)
	if err != nil {
		return nil, "", nil, err
	}
	if m := strings.Fields(string(merges)); len(m) > 0 {
		return nil, "it contains merge commits, which hide what they change; a proposal is a line of commits on the default branch (rebase it instead of merging)", m, nil
	}
	// Every path any commit touches, not only the net change: a commit that edits a workflow
	// and a later one that reverts it still went through the workflow.
	each, err := e.gitBytes("log", "--no-renames", "--name-only", "-z", "--format=", from+".."+to)
	if err != nil {
		return nil, "", nil, err
	}
	net, err := e.gitBytes("diff", "--no-renames", "--name-only", "-z", from, to)
	if err != nil {
		return nil, "", nil, err
	}
	files = union(nulPaths(each), nulPaths(net))
	reason, bad = e.vet(files)
	return files, reason, bad, nil
}

// pushedFiles adds to files what head changes from the default branch it lands on
// (refs/autonomy/base) and vets the union again.
func (e *Env) pushedFiles(files []string, head string) ([]string, string, []string, error) {
	net, err := e.gitBytes("diff", "--no-renames", "--name-only", "-z", "refs/autonomy/base", head)
	if err != nil {
		return nil, "", nil, err
	}
	files = union(files, nulPaths(net))
	reason, bad := e.vet(files)
	return files, reason, bad, nil
}

// refusedPaths are what no proposal may change, and why: what decides what every job may do
// (the workflows, the local actions they use, which run from the proposal's branch when its
// checks are dispatched there), and the installation's data, which the trusted jobs read their
// rules from (the human-required paths, the maintainers, the capabilities).
var refusedPaths = []struct{ glob, why string }{
	{workflowGlob, "it changes workflows, which decide what every job may do; no agent may"},
	{".github/actions/**", "it changes the repository's own actions, which workflows run; no agent may"},
	{".autonomy/**", "it changes the installation (.autonomy/), whose rules the trusted jobs read; no agent may (compile the profile again instead)"},
}

// vet is why a proposal changing files is refused ("" when it is not), with the paths at fault.
func (e *Env) vet(files []string) (string, []string) {
	var odd []string
	for _, f := range files {
		if strings.ContainsFunc(f, unicode.IsControl) {
			odd = append(odd, strconv.Quote(f))
		}
	}
	if len(odd) > 0 {
		return "it names files with control characters (a line break, a tab…), which no glob check can be trusted with", odd
	}
	for _, r := range refusedPaths {
		if bad := matching(files, []string{r.glob}); len(bad) > 0 {
			return r.why, bad
		}
	}
	if e.Scope == "" {
		return "", nil
	}
	var outside []string
	for _, f := range files {
		if !Match(e.Scope, f) {
			outside = append(outside, f)
		}
	}
	if len(outside) > 0 {
		return fmt.Sprintf("%s may propose changes to %s only, and it changes", e.Actor, e.Scope), outside
	}
	return "", nil
}

// nulPaths splits git's -z output into paths, as they are (an empty record is no path).
func nulPaths(out []byte) []string {
	var paths []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			paths = append(paths, string(f))
		}
	}
	return paths
}

// union is the sorted set of the paths of both lists.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
