package gitws

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// plain runs the user's git as the agent would, with none of the runner's protections.
func plain(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// evilHistory is base, then X adding .github/workflows/evil.yml, then Y removing it again.
func evilHistory(t *testing.T) (repo, base, x, y string) {
	repo, _ = newRepo(t)
	base = run(t, repo, "rev-parse", "HEAD")
	if err := os.MkdirAll(filepath.Join(repo, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	x = commit(t, repo, ".github/workflows/evil.yml")
	run(t, repo, "rm", "--quiet", "--", ".github/workflows/evil.yml")
	run(t, repo, "commit", "--quiet", "-m", "innocent")
	return repo, base, x, run(t, repo, "rev-parse", "HEAD")
}

// TestReplaceRefNotHonored: a replace ref the agent plants makes the user's git read another
// commit for the one a branch names; the runner's git reads the real one.
func TestReplaceRefNotHonored(t *testing.T) {
	t.Parallel()
	repo, base, x, _ := evilHistory(t)
	plain(t, repo, "replace", x, base)
	if got := plain(t, repo, "ls-tree", "-r", "--name-only", x); strings.Contains(got, "evil") {
		t.Fatalf("the replace ref does not hide the file from the plain git, so this test proves nothing:\n%s", got)
	}
	if got := run(t, repo, "ls-tree", "-r", "--name-only", x); !strings.Contains(got, ".github/workflows/evil.yml") {
		t.Errorf("the runner's git read the replacement, not the commit:\n%s", got)
	}
}

// TestGraftNotHonored: a graft in info/grafts states other parents for a commit; the runner's
// git reads the commit's own.
func TestGraftNotHonored(t *testing.T) {
	t.Parallel()
	repo, base, x, y := evilHistory(t)
	write(t, filepath.Join(repo, ".git", "info", "grafts"), y+" "+base+"\n")
	if got := plain(t, repo, "rev-list", base+".."+y); strings.Contains(got, x) {
		t.Fatalf("the graft does not hide %s from the plain git, so this test proves nothing", x)
	}
	if got := run(t, repo, "rev-list", base+".."+y); !strings.Contains(got, x) {
		t.Errorf("the runner's git followed the graft and lost %s: %q", x, got)
	}
}

// TestLyingCommitGraphNotBelieved: a commit-graph file states parents for commits without
// being checked; one the agent wrote naming base as the parent of z hides x (which added a
// workflow, and y removed) from every check that reads base..w. The runner's git reads the
// commits themselves.
func TestLyingCommitGraphNotBelieved(t *testing.T) {
	t.Parallel()
	repo, base, x, _ := evilHistory(t)
	z := commit(t, repo, "z")
	w := commit(t, repo, "w")
	plain(t, repo, "commit-graph", "write", "--reachable")
	forgeParent(t, filepath.Join(repo, ".git", "objects", "info", "commit-graph"), z, base)
	if got := plain(t, repo, "rev-list", base+".."+w); strings.Contains(got, x) {
		t.Fatalf("the forged commit-graph does not hide %s from the plain git, so this test proves nothing", x)
	}
	if got := run(t, repo, "rev-list", base+".."+w); !strings.Contains(got, x) {
		t.Errorf("the runner's git believed the commit-graph and lost %s: %q", x, got)
	}
}

// forgeParent rewrites the commit-graph file so that it states parent as the first parent of
// commit (SHA-1, version 1: chunk OIDL holds the sorted ids, CDAT a row of 36 bytes per commit,
// its first parent's position at offset 20).
func forgeParent(t *testing.T, path, commit, parent string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	chunks := map[string]int{}
	for i := 0; i < int(data[6]); i++ {
		row := data[8+12*i:]
		chunks[string(row[:4])] = int(binary.BigEndian.Uint64(row[4:12]))
	}
	oidl, cdat := chunks["OIDL"], chunks["CDAT"]
	n := (cdat - oidl) / 20
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, hex.EncodeToString(data[oidl+20*i:oidl+20*i+20]))
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("cannot read the commit-graph %s", path)
	}
	pos := func(id string) int {
		i := sort.SearchStrings(ids, id)
		if i == n || ids[i] != id {
			t.Fatalf("%s is not in the commit-graph", id)
		}
		return i
	}
	binary.BigEndian.PutUint32(data[cdat+36*pos(commit)+20:], uint32(pos(parent)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// driverRepo is a repository whose own configuration defines a filter and a merge driver that
// leave a mark when run, and a .gitattributes naming them for every file.
func driverRepo(t *testing.T) (repo, trees, marker string) {
	repo, trees = newRepo(t)
	marker = filepath.Join(t.TempDir(), "ran")
	sh := "touch " + marker + "; cat"
	for _, kv := range [][2]string{
		{"filter.evil.smudge", sh}, {"filter.evil.clean", sh}, {"filter.evil.process", "touch " + marker},
		{"filter.evil.required", "true"}, {"merge.evil.driver", "touch " + marker + "; exit 0"},
	} {
		plain(t, repo, "config", kv[0], kv[1])
	}
	write(t, filepath.Join(repo, ".gitattributes"), "* filter=evil merge=evil\n")
	write(t, filepath.Join(repo, "f"), "base\n")
	plain(t, repo, "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "-c", "filter.evil.required=false", "add", "-A")
	plain(t, repo, "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "-c", "filter.evil.required=false", "commit", "--quiet", "-m", "attributes")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the setup ran the driver")
	}
	return repo, trees, marker
}

// TestNoFilterFromTheRepository: a filter or merge driver the repository's configuration
// defines, named by a committed .gitattributes, is not run by the runner's worktree add, status,
// merge-tree nor fast-forward, and the files arrive as committed.
func TestNoFilterFromTheRepository(t *testing.T) {
	t.Parallel()
	repo, trees, marker := driverRepo(t)
	path := filepath.Join(trees, "w")
	base, err := Add(context.Background(), repo, path, "side")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(path, "f")); err != nil || string(data) != "base\n" {
		t.Errorf("the worktree's file: %q, %v", data, err)
	}
	write(t, filepath.Join(path, "f"), "side\n")
	plain(t, path, "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "-c", "filter.evil.required=false", "commit", "--quiet", "-am", "side")
	if _, _, err := Remove(context.Background(), repo, path, base, ""); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "f"), "main\n")
	plain(t, repo, "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "-c", "filter.evil.required=false", "commit", "--quiet", "-am", "main")
	_, err = Output(context.Background(), repo, "merge-tree", "--write-tree", "HEAD", "side")
	if !Failed(err, 1) {
		t.Errorf("merge-tree with the merge driver off: %v, want a conflict (exit 1)", err)
	}
	if _, err := Git(context.Background(), repo, "merge", "--ff-only", "--quiet", "side"); err == nil {
		t.Error("a fast-forward that is none succeeded")
	}
	// A fast-forward that checks files out, as the code flow's in the installation root.
	main := run(t, repo, "rev-parse", "HEAD")
	write(t, filepath.Join(repo, "f"), "changed\n")
	plain(t, repo, "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "-c", "filter.evil.required=false", "commit", "--quiet", "-am", "changed")
	ahead := run(t, repo, "rev-parse", "HEAD")
	plain(t, repo, "-c", "filter.evil.process=", "-c", "filter.evil.smudge=", "-c", "filter.evil.required=false", "reset", "--quiet", "--hard", main)
	if _, err := Git(context.Background(), repo, "merge", "--ff-only", "--quiet", ahead); err != nil {
		t.Errorf("a fast-forward with the filter off: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "f")); string(data) != "changed\n" {
		t.Errorf("after the fast-forward, f is %q", data)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the runner's git ran a filter or merge driver the repository configured")
	}
}

// TestNoGlobalConfig: the user's global configuration (git-lfs's filter is usually there) is not
// read: a filter defined there does not run, and GIT_ variables of the caller do not reach git.
func TestNoGlobalConfig(t *testing.T) {
	repo, trees := newRepo(t)
	home := t.TempDir()
	marker := filepath.Join(home, "ran")
	write(t, filepath.Join(home, ".gitconfig"), "[filter \"lfs\"]\n\tsmudge = touch "+marker+"; cat\n\tprocess = touch "+marker+"\n\trequired = true\n")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'filter.lfs.smudge'='touch "+marker+"'")
	write(t, filepath.Join(repo, ".gitattributes"), "* filter=lfs\n")
	plain(t, repo, "-c", "filter.lfs.process=", "-c", "filter.lfs.required=false", "add", "-A")
	plain(t, repo, "-c", "filter.lfs.process=", "-c", "filter.lfs.required=false", "commit", "--quiet", "-m", "lfs")
	os.Remove(marker)
	if _, err := Add(context.Background(), repo, filepath.Join(trees, "w"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the runner's git ran a filter from the user's global configuration")
	}
	if env := strings.Join(gitEnv(), "\n"); !bytes.Contains([]byte(env), []byte("GIT_CONFIG_GLOBAL="+os.DevNull)) || strings.Contains(env, "GIT_CONFIG_PARAMETERS") {
		t.Errorf("git's environment:\n%s", env)
	}
}

// TestTransferRunsNothingTheRepositoryNames: the repository's configuration (which the agent can
// write) rewriting the remote a push or fetch names (url.<base>.insteadOf) to an ext:: command or
// an ssh remote with its own core.sshCommand, allowed by its protocol.<name>.allow, runs nothing.
func TestTransferRunsNothingTheRepositoryNames(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	rm := Remote{URL: srv.URL + "/acme/app.git", Scratch: filepath.Join(dir, "scratch")}
	head := plain(t, repo, "rev-parse", "HEAD")
	for _, to := range []string{"ext::sh -c touch% " + marker, "ssh://example.invalid/x.git"} {
		plain(t, repo, "config", "protocol.ext.allow", "always")
		plain(t, repo, "config", "protocol.ssh.allow", "always")
		plain(t, repo, "config", "core.sshCommand", "touch "+marker+";")
		plain(t, repo, "config", "--replace-all", "url."+to+".insteadOf", rm.URL)
		if out, err := Push(context.Background(), repo, rm, head, "refs/heads/x"); err == nil {
			t.Errorf("a push to a server without the repository succeeded: %s", out)
		}
		if _, out, err := Fetch(context.Background(), repo, rm, "refs/heads/main", "refs/x"); err == nil {
			t.Errorf("a fetch from a server without the repository succeeded: %s", out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("a transfer the repository rewrote to %s ran its command", to)
		}
		plain(t, repo, "config", "--remove-section", "url."+to)
	}
}

// A scratch git directory a killed transfer left (a day old) is removed by the next transfer;
// a recent one, maybe another process's transfer under way, is kept.
func TestTransferSweepsLeftScratch(t *testing.T) {
	t.Parallel()
	repo, _ := newRepo(t)
	rm := Remote{URL: "http://127.0.0.1:1/acme/app.git", Scratch: filepath.Join(t.TempDir(), "scratch")}
	old, recent := filepath.Join(rm.Scratch, "transfer-old"), filepath.Join(rm.Scratch, "transfer-recent")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(filepath.Join(d, "refs"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(context.Background(), repo, rm, plain(t, repo, "rev-parse", "HEAD"), "refs/heads/x"); err == nil {
		t.Fatal("a push to a closed port succeeded")
	}
	left, _ := os.ReadDir(rm.Scratch)
	if len(left) != 1 || left[0].Name() != "transfer-recent" {
		t.Errorf("left in the scratch folder: %v, want transfer-recent alone", left)
	}
}
