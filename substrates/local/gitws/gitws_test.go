package gitws

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// run runs git in dir for a test, which fails if git does.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := git(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newRepo is a repository with one commit, and a directory beside it for worktrees.
func newRepo(t *testing.T) (repo, trees string) {
	t.Helper()
	base := t.TempDir()
	repo, trees = filepath.Join(base, "repo"), filepath.Join(base, "trees")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "init", "--quiet")
	run(t, repo, "config", "user.name", "Test")
	run(t, repo, "config", "user.email", "test@example.com")
	run(t, repo, "config", "commit.gpgsign", "false")
	write(t, filepath.Join(repo, "README"), "hello\n")
	run(t, repo, "add", "README")
	run(t, repo, "commit", "--quiet", "-m", "first")
	return repo, trees
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commit makes a commit in the worktree dir and returns it.
func commit(t *testing.T, dir, file string) string {
	t.Helper()
	write(t, filepath.Join(dir, file), file+"\n")
	run(t, dir, "add", "--", file)
	run(t, dir, "commit", "--quiet", "-m", "add "+file)
	return run(t, dir, "rev-parse", "HEAD")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestRepo(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{repo, sub} {
		root, err := Repo(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !samePath(root, repo) {
			t.Errorf("Repo(%s) = %s, want %s", dir, root, repo)
		}
	}
}

func TestRepoRefused(t *testing.T) {
	t.Parallel()
	plain := t.TempDir()
	unborn := t.TempDir()
	run(t, unborn, "init", "--quiet")
	repo, _ := newRepo(t)
	for _, c := range []struct{ dir, want string }{
		{plain, "is not inside a git repository: isolated workspaces need one (git init, and commit at least once)"},
		{unborn, "has no commit yet"},
		{filepath.Join(plain, "missing"), "no such file or directory"},
		{filepath.Join(repo, "README"), "is not a directory"},
		{filepath.Join(repo, ".git"), "not inside a git working tree"},
	} {
		root, err := Repo(c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Repo(%s) = %q, %v; want an error saying %q", c.dir, root, err, c.want)
		}
	}
}

func TestValidBranch(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"main", "feature/x", "autonomy/bot/20240101-abc", "fix-1.2", "ünïcode"} {
		if err := ValidBranch(name); err != nil {
			t.Errorf("ValidBranch(%q): %v", name, err)
		}
	}
	for _, name := range []string{"", "-x", "--force", "a..b", "a b", "a~1", "x.lock", "a/.b", "trailing/", "@", "HEAD", "@{-1}", "a@{0}", "co:lon", "star*"} {
		err := ValidBranch(name)
		if err == nil {
			t.Errorf("ValidBranch(%q) accepted it", name)
			continue
		}
		if !strings.Contains(err.Error(), `for example "autonomy/fix-login"`) {
			t.Errorf("ValidBranch(%q) = %v: no example of a valid name", name, err)
		}
	}
}

func TestAddDetached(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	headSHA := run(t, repo, "rev-parse", "HEAD")
	path := filepath.Join(trees, "s1")
	base, err := Add(context.Background(), repo, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if base != headSHA {
		t.Errorf("base %s, want HEAD %s", base, headSHA)
	}
	if !exists(filepath.Join(path, "README")) {
		t.Error("the worktree has no README")
	}
	if _, err := git(context.Background(), path, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Error("the worktree is on a branch, want detached")
	}
	note, _, err := Remove(context.Background(), repo, path, base, "saved/s1")
	if err != nil || note != "" {
		t.Fatalf("Remove of a clean worktree: %q, %v", note, err)
	}
	if exists(path) {
		t.Error("the worktree is still there")
	}
	if list := run(t, repo, "worktree", "list", "--porcelain"); strings.Contains(list, path) {
		t.Errorf("git still lists the worktree:\n%s", list)
	}
	if b := run(t, repo, "branch", "--list", "saved/*"); b != "" {
		t.Errorf("a branch was saved for a worktree without commits: %s", b)
	}
}

func TestAddNewBranch(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	headSHA := run(t, repo, "rev-parse", "HEAD")
	path := filepath.Join(trees, "s2")
	base, err := Add(context.Background(), repo, path, "agent/new")
	if err != nil {
		t.Fatal(err)
	}
	if base != headSHA {
		t.Errorf("base %s, want HEAD %s", base, headSHA)
	}
	if got := run(t, path, "symbolic-ref", "HEAD"); got != "refs/heads/agent/new" {
		t.Errorf("the worktree is on %s", got)
	}
	tip := commit(t, path, "work")
	note, _, err := Remove(context.Background(), repo, path, base, "saved/s2")
	if err != nil || note != "" {
		t.Fatalf("Remove: %q, %v", note, err)
	}
	if got := run(t, repo, "rev-parse", "refs/heads/agent/new"); got != tip {
		t.Errorf("the branch is at %s, want its commit %s", got, tip)
	}
}

func TestAddExistingBranch(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	run(t, repo, "branch", "topic")
	first := filepath.Join(trees, "first")
	if _, err := Add(context.Background(), repo, first, "topic"); err != nil {
		t.Fatal(err)
	}
	tip := commit(t, first, "one")
	if _, _, err := Remove(context.Background(), repo, first, "", ""); err != nil {
		t.Fatal(err)
	}
	// The branch exists now, with a commit HEAD does not have: the worktree starts from it.
	second := filepath.Join(trees, "second")
	base, err := Add(context.Background(), repo, second, "topic")
	if err != nil {
		t.Fatal(err)
	}
	if base != tip {
		t.Errorf("base %s, want the branch's tip %s", base, tip)
	}
	if !exists(filepath.Join(second, "one")) {
		t.Error("the branch's file is not checked out")
	}
	// A branch can be checked out in one worktree only.
	third := filepath.Join(trees, "third")
	_, err = Add(context.Background(), repo, third, "topic")
	if err == nil || !strings.Contains(err.Error(), "already checked out") || !strings.Contains(err.Error(), "choose another branch") {
		t.Errorf("Add of a checked-out branch: %v; want git's message and advice", err)
	}
	if exists(third) {
		t.Error("a failed Add left its directory")
	}
	// Nor can the main worktree's.
	current := run(t, repo, "symbolic-ref", "--short", "HEAD")
	if _, err := Add(context.Background(), repo, third, current); err == nil {
		t.Errorf("Add of the main worktree's branch %s succeeded", current)
	}
}

func TestAddRefused(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	for _, name := range []string{"-x", "a..b", "a b", "--detach"} {
		path := filepath.Join(trees, "bad")
		if _, err := Add(context.Background(), repo, path, name); err == nil || !strings.Contains(err.Error(), "invalid branch name") {
			t.Errorf("Add with branch %q: %v", name, err)
		}
		if exists(path) {
			t.Errorf("Add with branch %q created %s", name, path)
		}
	}
	// A path that could be read as an option is a path all the same.
	dash := filepath.Join(trees, "-f")
	base, err := Add(context.Background(), repo, dash, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Remove(context.Background(), repo, dash, base, ""); err != nil || exists(dash) {
		t.Errorf("Remove of %s: %v", dash, err)
	}
	full := filepath.Join(trees, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(full, "precious"), "do not lose\n")
	if _, err := Add(context.Background(), repo, full, ""); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Add into a directory in use: %v", err)
	}
	if !exists(filepath.Join(full, "precious")) {
		t.Error("Add lost a file in the directory")
	}
}

func TestRemoveDirtyKept(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	for name, dirty := range map[string]func(path string){
		"untracked": func(path string) { write(t, filepath.Join(path, "new"), "x") },
		"modified":  func(path string) { write(t, filepath.Join(path, "README"), "changed") },
		"staged": func(path string) {
			write(t, filepath.Join(path, "README"), "changed")
			run(t, path, "add", "README")
		},
	} {
		path := filepath.Join(trees, name)
		base, err := Add(context.Background(), repo, path, "")
		if err != nil {
			t.Fatal(err)
		}
		dirty(path)
		note, _, err := Remove(context.Background(), repo, path, base, "saved/"+name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(note, "kept the worktree "+path) || !strings.Contains(note, "uncommitted changes") {
			t.Errorf("%s: note %q", name, note)
		}
		if !exists(path) {
			t.Errorf("%s: the worktree was removed", name)
		}
	}
}

func TestRemoveSavesDetachedCommits(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	run(t, repo, "branch", "saved/s")
	for i, name := range []string{"saved/s-2", "saved/s-3"} {
		path := filepath.Join(trees, fmt.Sprint(i))
		base, err := Add(context.Background(), repo, path, "")
		if err != nil {
			t.Fatal(err)
		}
		tip := commit(t, path, fmt.Sprint("file", i))
		note, saved, err := Remove(context.Background(), repo, path, base, "saved/s")
		if err != nil {
			t.Fatal(err)
		}
		if saved != (Saved{name, tip}) {
			t.Errorf("saved as %+v, want %s at %s", saved, name, tip)
		}
		if !strings.Contains(note, "as the branch "+name) {
			t.Errorf("note %q does not name the branch %s", note, name)
		}
		if exists(path) {
			t.Error("the worktree was not removed once its commits were saved")
		}
		if got := run(t, repo, "rev-parse", "refs/heads/"+name); got != tip {
			t.Errorf("branch %s at %s, want the worktree's commit %s", name, got, tip)
		}
	}
	// Without a name to save them as, the commits stay where they are.
	path := filepath.Join(trees, "unnamed")
	base, err := Add(context.Background(), repo, path, "")
	if err != nil {
		t.Fatal(err)
	}
	commit(t, path, "unnamed")
	note, _, err := Remove(context.Background(), repo, path, base, "")
	if err != nil || !strings.Contains(note, "kept the worktree") || !exists(path) {
		t.Errorf("Remove with commits and no name: %q, %v", note, err)
	}
	// A HEAD moved back, behind the commit it started from, has nothing new to save.
	path = filepath.Join(trees, "back")
	if base, err = Add(context.Background(), repo, path, ""); err != nil {
		t.Fatal(err)
	}
	ahead := commit(t, path, "again")
	run(t, path, "checkout", "--quiet", "--detach", base)
	if note, _, err := Remove(context.Background(), repo, path, ahead, "saved/back"); err != nil || note != "" || exists(path) {
		t.Errorf("Remove with HEAD behind base: %q, %v", note, err)
	}
}

func TestRemoveElsewhere(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	// A directory that is not a worktree is left alone, even inside the repository.
	inside := filepath.Join(repo, "sub")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{inside, repo, t.TempDir()} {
		if _, _, err := Remove(context.Background(), repo, dir, "", "x"); err == nil || !strings.Contains(err.Error(), "is not a linked worktree") {
			t.Errorf("Remove(%s): %v", dir, err)
		}
	}
	if !exists(inside) || !exists(filepath.Join(repo, "README")) {
		t.Fatal("Remove touched a directory that is not a worktree")
	}
	// A worktree deleted by hand is only pruned.
	path := filepath.Join(trees, "gone")
	base, err := Add(context.Background(), repo, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if note, _, err := Remove(context.Background(), repo, path, base, "x"); err != nil || note != "" {
		t.Errorf("Remove of a deleted worktree: %q, %v", note, err)
	}
	if list := run(t, repo, "worktree", "list"); strings.Contains(list, path) {
		t.Errorf("git still lists the deleted worktree:\n%s", list)
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				name := fmt.Sprintf("g%d-%d", g, i)
				path := filepath.Join(trees, name)
				branch := ""
				if i%2 == 1 {
					branch = "agent/" + name
				}
				base, err := Add(context.Background(), repo, path, branch)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					return
				}
				if i%3 == 0 {
					if err := commitQuiet(path, name); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
						return
					}
				}
				note, _, err := Remove(context.Background(), repo, path, base, "saved/"+name)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					return
				}
				if exists(path) {
					errs <- fmt.Errorf("%s: not removed: %s", name, note)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if list := run(t, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", list)
	}
	for g := range 4 {
		for _, i := range []int{0, 3} {
			name := fmt.Sprintf("g%d-%d", g, i)
			want := "saved/" + name
			if i%2 == 1 {
				want = "agent/" + name
			}
			if _, err := git(context.Background(), repo, "rev-parse", "--verify", "refs/heads/"+want); err != nil {
				t.Errorf("the commit of %s is on no branch %s: %v", name, want, err)
			}
		}
	}
}

// commitQuiet is commit for a goroutine, which must not call t.Fatal.
func commitQuiet(dir, file string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(file), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", "--", file}, {"commit", "--quiet", "-m", file}} {
		if _, err := git(context.Background(), dir, args...); err != nil {
			return err
		}
	}
	return nil
}

func TestGitEnv(t *testing.T) {
	t.Setenv("GIT_DIR", "/nonexistent")
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	t.Setenv("GH_TOKEN", "ghs_secret1")
	t.Setenv("GITHUB_TOKEN", "ghs_secret2")
	t.Setenv("GH_TOKENISH", "kept")
	env := strings.Join(gitEnv(), "\n")
	if strings.Contains(env, "GIT_DIR=") || strings.Contains(env, "GIT_TERMINAL_PROMPT=1") || !strings.Contains(env, "GIT_TERMINAL_PROMPT=0") ||
		strings.Contains(env, "ghs_secret") || !strings.Contains(env, "GH_TOKENISH=kept") {
		t.Errorf("git's environment:\n%s", env)
	}
	repo, _ := newRepo(t)
	if _, err := Repo(repo); err != nil {
		t.Errorf("a GIT_DIR set by a parent git leaks into Repo: %v", err)
	}
}

// TestPlantedHooksNotRun: the agent can write the repository's git directory (it commits), so it
// can plant hooks and a core.fsmonitor command there; Add and Remove, which run outside the
// sandbox, must run none of them.
func TestPlantedHooksNotRun(t *testing.T) {
	t.Parallel()
	repo, trees := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\necho \"$0\" >> " + marker + "\n"
	hooks := filepath.Join(repo, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-checkout", "reference-transaction", "post-index-change"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	monitor := filepath.Join(t.TempDir(), "fsmonitor")
	if err := os.WriteFile(monitor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "config", "core.fsmonitor", monitor)
	for i, branch := range []string{"", "planted"} {
		path := filepath.Join(trees, fmt.Sprint(i))
		base, err := Add(context.Background(), repo, path, branch)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Remove(context.Background(), repo, path, base, "saved/planted"); err != nil {
			t.Fatal(err)
		}
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("git ran what the agent planted, outside the sandbox:\n%s", data)
	}
}
