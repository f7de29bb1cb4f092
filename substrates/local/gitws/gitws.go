// Package gitws gives a session a git worktree of its own, and takes it away again without losing
// any work done in it.
//
// It runs the git binary the user has, with an argument vector and never a shell, so that the
// worktrees are the ones the user's own git sees and manages. Paths and branch names are passed
// after "--" wherever git accepts it, and branch names are checked first, so that neither can be
// read as an option.
package gitws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// lockRetries is how many times a git command that found a lock file is run again, with a backoff
// doubling from lockBackoff: other processes add and remove worktrees of the same repository at
// the same time, and git fails at once, rather than waiting, when another holds a lock it needs.
const (
	lockRetries = 6
	lockBackoff = 25 * time.Millisecond
)

// gitError is a git command that failed, with what git said.
type gitError struct {
	args   []string
	stderr string
	code   int // git's exit status, or -1 if it did not exit normally
	err    error
}

func (e *gitError) Error() string {
	msg := "git " + strings.Join(e.args, " ") + " failed"
	if e.stderr != "" {
		return msg + ": " + e.stderr
	}
	return msg + ": " + e.err.Error()
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit status of the failed git command err, or -1 if err is not one.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// locked says whether git failed because another process holds a lock file. git names the file
// ("Unable to create '…/index.lock': File exists."), which identifies the case in any language.
func locked(err error) bool {
	var ge *gitError
	return errors.As(err, &ge) && (strings.Contains(ge.stderr, ".lock'") || strings.Contains(ge.stderr, "File exists"))
}

// git runs git -C dir args… and returns its standard output, trimmed. It retries a command that
// failed on a lock file, as another process is briefly using the repository.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	backoff := lockBackoff
	for attempt := 0; ; attempt++ {
		out, err := gitOnce(ctx, dir, args)
		if err == nil || !locked(err) || attempt == lockRetries {
			if err != nil && locked(err) {
				err = fmt.Errorf("%w (another git command is using the repository; if none is running, one crashed: delete the lock file named above)", err)
			}
			return out, err
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func gitOnce(ctx context.Context, dir string, args []string) (string, error) {
	out, err := gitRaw(ctx, dir, args)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// gitRaw is gitOnce with the output as git wrote it (NUL-separated paths keep every byte), on
// a failure too (git merge-tree lists the conflicts and exits 1).
func gitRaw(ctx context.Context, dir string, args []string) ([]byte, error) {
	return gitRawEnv(ctx, dir, nil, args)
}

// gitRawEnv is gitRaw with extra added to git's environment.
func gitRawEnv(ctx context.Context, dir string, extra, args []string) ([]byte, error) {
	argv := append(append([]string{"-C", dir}, safeConfig...), args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	// git cleans up its lock files on SIGTERM; killed outright it leaves them behind, and every
	// later git command in the repository fails until someone deletes them by hand.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(append(gitEnv(), driverConfig(ctx, dir, args)...), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return stdout.Bytes(), &gitError{args: args, stderr: strings.TrimSpace(stderr.String()), code: code, err: err}
	}
	return stdout.Bytes(), nil
}

// Repo is the root of the git working tree that holds dir. A repository without a commit does
// not do: a worktree starts from a commit.
func Repo(dir string) (string, error) {
	ctx := context.Background()
	if fi, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("cannot look for a git repository at %s: %v", dir, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory: isolated workspaces need a git repository", dir)
	}
	if err := checkGit(ctx); err != nil {
		return "", err
	}
	inside, err := git(ctx, dir, "rev-parse", "--is-inside-work-tree")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && strings.Contains(ge.stderr, "not a git repository") {
			return "", fmt.Errorf("%s is not inside a git repository: isolated workspaces need one (git init, and commit at least once)", dir)
		}
		return "", fmt.Errorf("cannot find the git repository of %s: %w", dir, err)
	}
	if inside != "true" {
		// Inside the .git directory, or a bare repository: there are no files to work on.
		return "", fmt.Errorf("%s is not inside a git working tree: isolated workspaces need one (run from the repository's files, not its .git directory nor a bare repository)", dir)
	}
	root, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("cannot find the top of the git working tree of %s: %w", dir, err)
	}
	if _, err := head(ctx, root); err != nil {
		return "", err
	}
	return root, nil
}

// head is the commit checked out in dir.
func head(ctx context.Context, dir string) (string, error) {
	sha, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if exitCode(err) == 1 {
		return "", fmt.Errorf("the git repository %s has no commit yet: isolated workspaces start from one (git add -A && git commit -m 'first commit')", dir)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read HEAD in %s: %w", dir, err)
	}
	return sha, nil
}

// ValidBranch checks that name can be a branch, with git's own rules, before git sees it anywhere
// it could read it otherwise: as an option, or as a revision like "@{-1}".
func ValidBranch(name string) error {
	const example = `; for example "autonomy/fix-login"`
	switch {
	case name == "":
		return errors.New("the branch name is empty" + example)
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("invalid branch name %q: it starts with '-', so git would read it as an option%s", name, example)
	case name == "HEAD" || name == "@":
		return fmt.Errorf("invalid branch name %q: git reads it as the current commit%s", name, example)
	}
	// check-ref-format takes no "--", but the name cannot start with '-' here. It runs in the
	// filesystem root so that no repository around the current directory is involved.
	out, err := git(context.Background(), "/", "check-ref-format", "--branch", name)
	if err != nil && exitCode(err) < 0 {
		return fmt.Errorf("cannot check the branch name %q: %w", name, err)
	}
	if err != nil || out != name {
		// out != name: git expanded a revision such as "@{-1}" into the branch it stands for.
		return fmt.Errorf("invalid branch name %q: git refuses it (no spaces, '..', '~', '^', ':', '?', '*', '[', '\\', '@{', nor a component starting with '.' or ending with '.lock')%s", name, example)
	}
	return nil
}

// Add creates a worktree of repo at path and returns the commit it starts from (base), which
// Remove needs. With no branch, the worktree is detached at HEAD; with the name of an existing
// branch, that branch is checked out in it; with a new name, the branch is created at HEAD.
// The parent directories of path are created; path itself must not exist, or be empty.
func Add(ctx context.Context, repo, path, branch string) (base string, err error) {
	if branch != "" {
		if err := ValidBranch(branch); err != nil {
			return "", err
		}
	}
	if err := checkGit(ctx); err != nil {
		return "", err
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", err
	}
	// HEAD is resolved once, so that the worktree starts from exactly the commit returned even if
	// HEAD moves meanwhile.
	sha, err := head(ctx, repo)
	if err != nil {
		return "", err
	}
	unlock, err := lockRepo(ctx, repo)
	if err != nil {
		return "", err
	}
	defer unlock()
	if branch == "" {
		if _, err := git(ctx, repo, "worktree", "add", "--detach", "--", path, sha); err != nil {
			return "", addFailed(ctx, repo, path, "", err)
		}
		return sha, nil
	}
	// A new branch is created on its own before the worktree, unlike with "worktree add -b", so
	// that each step can be retried: a retried "-b" finds the branch its first attempt created.
	created, err := createBranch(ctx, repo, branch, sha)
	if err != nil {
		return "", err
	}
	if _, err := git(ctx, repo, "worktree", "add", "--", path, branch); err != nil {
		if created {
			// Best effort: the branch was made for this worktree, and nothing is on it yet.
			_, _ = git(ctx, repo, "update-ref", "-d", "refs/heads/"+branch, sha)
		}
		return "", addFailed(ctx, repo, path, branch, err)
	}
	unlock()
	if created {
		return sha, nil
	}
	// The branch was there already: the worktree starts from its tip.
	base, err = head(ctx, path)
	if err != nil {
		return "", fmt.Errorf("created the worktree %s, but %w", path, err)
	}
	return base, nil
}

// lockRepo takes the lock that serializes worktree changes in repo across processes (see
// lockWorktrees); the function it returns releases it and may be called more than once.
func lockRepo(ctx context.Context, repo string) (func(), error) {
	common, err := gitPath(ctx, repo, "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("cannot find the git directory of %s: %w", repo, err)
	}
	unlock, err := lockWorktrees(ctx, common)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(unlock) }, nil
}

// createBranch creates branch at sha unless it exists, and says whether it created it.
func createBranch(ctx context.Context, repo, branch, sha string) (bool, error) {
	if ok, err := branchExists(ctx, repo, branch); err != nil || ok {
		return false, err
	}
	if _, err := git(ctx, repo, "branch", "--no-track", "--", branch, sha); err != nil {
		// Another process may have created it meanwhile, which is as good.
		if ok, _ := branchExists(ctx, repo, branch); ok {
			return false, nil
		}
		return false, fmt.Errorf("cannot create the branch %s: %w", branch, err)
	}
	return true, nil
}

// branchExists says whether refs/heads/branch exists in repo.
func branchExists(ctx context.Context, repo, branch string) (bool, error) {
	_, err := git(ctx, repo, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, fmt.Errorf("cannot look up the branch %s: %w", branch, err)
}

// addFailed explains a failed "git worktree add" and what to do about it.
func addFailed(ctx context.Context, repo, path, branch string, err error) error {
	if branch != "" {
		if at, main := CheckedOut(ctx, repo, branch); at != "" {
			return fmt.Errorf("cannot create the worktree %s: %w (%s)", path, err, CheckedOutHint(branch, at, main))
		}
	}
	if entries, statErr := os.ReadDir(path); statErr == nil && len(entries) > 0 {
		return fmt.Errorf("cannot create the worktree %s: %w (the directory is not empty: move it away, or remove it if nothing in it is needed)", path, err)
	}
	return fmt.Errorf("cannot create the worktree %s: %w", path, err)
}

// CheckedOut is the worktree of repo in which branch is checked out ("" when none, or when git
// cannot tell), and whether that is the repository's main worktree (its first).
func CheckedOut(ctx context.Context, repo, branch string) (at string, main bool) {
	out, err := git(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return "", false
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			at, n = p, n+1
		} else if line == "branch refs/heads/"+branch {
			return at, n == 1
		}
	}
	return "", false
}

// CheckedOutHint says that branch is checked out in the worktree at (main: the repository's
// own) and what to do, for an error message.
func CheckedOutHint(branch, at string, main bool) string {
	if main {
		return fmt.Sprintf("the branch %s is checked out in the repository itself, %s, and a branch can be checked out in one worktree only: give --branch a new name (it is created from HEAD) or another branch, or switch %s to another branch first", branch, at, at)
	}
	return fmt.Sprintf("the branch %s is checked out in the worktree %s, and a branch can be checked out in one worktree only: finish there (a session's worktree goes when it ends), remove that worktree with git worktree remove %s, or choose another branch", branch, at, at)
}

// Saved is a branch Remove created for a worktree's commits, and the commit it created it at.
type Saved struct{ Branch, Head string }

// Remove removes the worktree at path that Add created from base, unless that would lose work.
// A worktree with uncommitted changes, untracked files included, is kept. A detached worktree
// whose HEAD has moved on from base has its commits saved as the branch saveAs (or saveAs-2,
// saveAs-3 … if taken) first; with saveAs empty it is kept instead. The note says what was kept
// or saved and where, for the user; it is empty when the worktree was simply removed. saved is
// the branch the commits were saved as and the commit it was created at, zero when none was.
//
// An empty base means it is not known (the process that added the worktree died): a detached
// HEAD then counts as saved when a branch or tag of repo already holds it, and is saved as saveAs
// otherwise.
func Remove(ctx context.Context, repo, path, base, saveAs string) (note string, saved Saved, err error) {
	if path, err = filepath.Abs(path); err != nil {
		return "", Saved{}, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// Deleted by hand: only git's record of it is left to clear.
		unlock, err := lockRepo(ctx, repo)
		if err != nil {
			return "", Saved{}, err
		}
		defer unlock()
		_, err = git(ctx, repo, "worktree", "prune")
		return "", Saved{}, err
	}
	if err := isWorktree(ctx, repo, path); err != nil {
		return "", Saved{}, err
	}
	status, err := git(ctx, path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", Saved{}, fmt.Errorf("cannot tell whether the worktree %s has uncommitted changes, so it is kept: %w", path, err)
	}
	if status != "" {
		n := strings.Count(status, "\n") + 1
		return fmt.Sprintf("kept the worktree %s: it has uncommitted changes (%d %s); commit or discard them there, then remove it with: git worktree remove %s", path, n, plural(n, "file"), path), Saved{}, nil
	}
	note, saved, keep, err := saveCommits(ctx, repo, path, base, saveAs)
	if err != nil || keep {
		return note, saved, err
	}
	unlock, err := lockRepo(ctx, repo)
	if err != nil {
		return note, saved, err
	}
	defer unlock()
	if _, err := git(ctx, repo, "worktree", "remove", "--", path); err != nil {
		return note, saved, fmt.Errorf("cannot remove the worktree %s: %w (remove it with git worktree remove %s once that is fixed)", path, err, path)
	}
	if _, err := git(ctx, repo, "worktree", "prune"); err != nil {
		return note, saved, fmt.Errorf("removed the worktree %s, but %w", path, err)
	}
	return note, saved, nil
}

// Tracked returns those of paths (slash paths relative to dir, a linked worktree of repo) that
// git tracks there.
func Tracked(ctx context.Context, repo, dir string, paths []string) (map[string]bool, error) {
	if err := isWorktree(ctx, repo, dir); err != nil {
		return nil, err
	}
	args := []string{"ls-files", "-z", "--full-name", "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	out, err := git(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	tracked := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			tracked[p] = true
		}
	}
	return tracked, nil
}

// isWorktree checks that path is the top of a linked worktree of repo, as Add makes: git -C on any
// other directory would act on whatever repository encloses it, the main working tree included.
func isWorktree(ctx context.Context, repo, path string) error {
	top, err := git(ctx, path, "rev-parse", "--show-toplevel")
	if err == nil && samePath(top, path) {
		var own, common, repoCommon string
		if own, err = gitPath(ctx, path, "--git-dir"); err == nil {
			if common, err = gitPath(ctx, path, "--git-common-dir"); err == nil {
				repoCommon, err = gitPath(ctx, repo, "--git-common-dir")
			}
		}
		// A linked worktree has a git directory of its own, inside the common one.
		if err == nil && samePath(common, repoCommon) && !samePath(own, common) {
			return nil
		}
	}
	msg := fmt.Sprintf("%s is not a linked worktree of the repository %s, so it is left alone", path, repo)
	if err != nil {
		return fmt.Errorf("%s: %w", msg, err)
	}
	return errors.New(msg)
}

// gitPath is a directory git rev-parse prints (--git-dir, --git-common-dir) for dir: git prints it
// relative to dir, or absolute.
func gitPath(ctx context.Context, dir, flag string) (string, error) {
	d, err := git(ctx, dir, "rev-parse", flag)
	if err != nil || filepath.IsAbs(d) {
		return d, err
	}
	return filepath.Join(dir, d), nil
}

// samePath says whether a and b name the same directory, through symbolic links.
func samePath(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// saveCommits makes sure the commits of a detached worktree outlive it: git would otherwise keep
// them only until garbage collection. It returns a note if there were any, the branch it saved
// them as (the one it created: a branch of that name made by someone else meanwhile is passed
// over, never taken for this worktree's), and whether the
// worktree must be kept because they could not be saved. A worktree on a branch, which holds its
// commits, or without commits of its own has nothing to save.
func saveCommits(ctx context.Context, repo, path, base, saveAs string) (note string, saved Saved, keep bool, err error) {
	_, err = git(ctx, path, "symbolic-ref", "--quiet", "HEAD")
	if err == nil {
		return "", Saved{}, false, nil
	}
	if exitCode(err) != 1 {
		return "", Saved{}, true, fmt.Errorf("cannot tell whether the worktree %s is on a branch, so it is kept: %w", path, err)
	}
	sha, err := head(ctx, path)
	if err != nil {
		return "", Saved{}, true, fmt.Errorf("the worktree %s is kept: %w", path, err)
	}
	if sha == base {
		return "", Saved{}, false, nil
	}
	if base == "" {
		// Its base is not known: nothing is lost when a branch or tag holds it already.
		if refs, err := git(ctx, repo, "for-each-ref", "--count=1", "--contains", sha, "--format=%(refname)", "refs/heads", "refs/tags"); err == nil && refs != "" {
			return "", Saved{}, false, nil
		}
	}
	// HEAD moved back, to a commit base already descends from: nothing new to save.
	if base != "" {
		if _, err := git(ctx, path, "merge-base", "--is-ancestor", sha, base); err == nil {
			return "", Saved{}, false, nil
		}
	}
	short := sha[:min(len(sha), 12)]
	if saveAs == "" {
		return fmt.Sprintf("kept the worktree %s: it has commits on no branch (HEAD at %s); save them with git -C %s branch NAME, then remove it with git worktree remove %s", path, short, path, path), Saved{}, true, nil
	}
	if err := ValidBranch(saveAs); err != nil {
		return "", Saved{}, true, fmt.Errorf("cannot save the commits of the worktree %s, so it is kept: %w", path, err)
	}
	for i := 1; i <= 100; i++ {
		name := saveAs
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		// createBranch leaves a name that exists, even one taken meanwhile, to the next round.
		created, err := createBranch(ctx, repo, name, sha)
		if err != nil {
			return "", Saved{}, true, fmt.Errorf("cannot save the commits of the worktree %s, so it is kept: %w", path, err)
		}
		if created {
			return fmt.Sprintf("saved the commits of the worktree %s as the branch %s (%s)", path, name, short), Saved{name, sha}, false, nil
		}
	}
	return "", Saved{}, true, fmt.Errorf("cannot save the commits of the worktree %s, so it is kept: the branches %s to %s-100 all exist already; delete some", path, saveAs, saveAs)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
