package gitws

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// minGit is the oldest git isolated workspaces work with: "git worktree remove" came in
// 2.17. Tests run with 2.39.
var minGit = [2]int{2, 17}

// versionCheck remembers, per process, what checking the git on PATH found.
var versionCheck struct {
	sync.Mutex
	done bool
	err  error
}

// checkGit fails, with what to do, when git is missing or older than minGit. It asks git
// once per process.
func checkGit(ctx context.Context) error {
	versionCheck.Lock()
	defer versionCheck.Unlock()
	if versionCheck.done {
		return versionCheck.err
	}
	out, err := gitOnce(ctx, "/", []string{"version"})
	if err != nil {
		return fmt.Errorf("cannot run git, which isolated workspaces need (git %d.%d or later): %w", minGit[0], minGit[1], err)
	}
	versionCheck.done, versionCheck.err = true, versionError(out)
	return versionCheck.err
}

// versionError reads the output of "git version" ("git version 2.39.5", "git version 2.39.3
// (Apple Git-146)", "git version 2.41.0.windows.1") and says why it does not do, or nil.
func versionError(out string) error {
	rest, ok := strings.CutPrefix(strings.TrimSpace(out), "git version ")
	fields := strings.FieldsFunc(rest, func(r rune) bool { return r == '.' || r == ' ' })
	var v [2]int
	for i := range v {
		if !ok || i >= len(fields) {
			ok = false
			break
		}
		n, err := strconv.Atoi(fields[i])
		if err != nil {
			ok = false
			break
		}
		v[i] = n
	}
	if !ok {
		return fmt.Errorf("cannot tell the version of git from %q: isolated workspaces need git %d.%d or later", strings.TrimSpace(out), minGit[0], minGit[1])
	}
	if v[0] < minGit[0] || v[0] == minGit[0] && v[1] < minGit[1] {
		return fmt.Errorf("git %d.%d is too old: isolated workspaces need git %d.%d or later (for git worktree remove); upgrade git", v[0], v[1], minGit[0], minGit[1])
	}
	return nil
}
