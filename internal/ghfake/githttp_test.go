package ghfake

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitAt runs git in dir with no configuration but the given -c pairs, and returns its output.
func gitAt(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func basicHeader(token string) string {
	return "http.extraHeader=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
}

// TestGitOverHTTP: with a GitDir, the fake serves git's smart HTTP at /<owner>/<repo>.git as
// GitHub does for a private repository: a token the API takes, as Basic's password, fetches and
// pushes (the push lands in GitDir); none, or a wrong one, is 401; the read-only token fetches
// but is refused a push.
func TestGitOverHTTP(t *testing.T) {
	root := t.TempDir()
	bare := filepath.Join(root, "app.git")
	work := filepath.Join(root, "work")
	for _, args := range [][]string{{"init", "-q", "--bare", bare}, {"init", "-q", "-b", "main", work}} {
		if out, err := gitAt(t, root, args...); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if out, err := gitAt(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "one"); err != nil {
		t.Fatalf("commit: %v: %s", err, out)
	}
	gh, err := New(Options{Owner: "acme", Repo: "app", Token: "tok", ReadOnlyToken: "ro", GitDir: bare})
	if err != nil {
		t.Fatal(err)
	}
	defer gh.Close()
	url := gh.URL + "acme/app.git"
	if out, err := gitAt(t, work, "push", url, "main"); err == nil || !strings.Contains(out, "401") && !strings.Contains(out, "Authentication failed") && !strings.Contains(out, "could not read Username") {
		t.Errorf("a push without a token: %v: %s", err, out)
	}
	if out, err := gitAt(t, work, "-c", basicHeader("wrong"), "push", url, "main"); err == nil {
		t.Errorf("a push with a wrong token succeeded: %s", out)
	}
	if out, err := gitAt(t, work, "-c", basicHeader("ro"), "push", url, "main"); err == nil || !strings.Contains(out, "403") {
		t.Errorf("a push with the read-only token: %v: %s", err, out)
	}
	if out, err := gitAt(t, work, "-c", basicHeader("tok"), "push", "-q", url, "main"); err != nil {
		t.Fatalf("a push with the token: %v: %s", err, out)
	}
	head, _ := gitAt(t, work, "rev-parse", "HEAD")
	if got, _ := gitAt(t, root, "--git-dir", bare, "rev-parse", "main"); got != head {
		t.Errorf("the push landed %q in GitDir, want %s", got, head)
	}
	if out, err := gitAt(t, work, "-c", basicHeader("ro"), "fetch", "-q", gh.URL+"ACME/app", "main:refs/fetched"); err != nil {
		t.Errorf("a fetch with the read-only token, without .git: %v: %s", err, out)
	}
}

// TestGitPullRefs: as on GitHub, a pull request's head is the read-only ref
// refs/pull/<number>/head: git ls-remote lists it, a fetch reads it, a push to the head branch
// moves it, and a push to it is refused as a hidden ref, changing nothing.
func TestGitPullRefs(t *testing.T) {
	s, feature := codeHost(t, Options{Owner: "o", Repo: "r"})
	if resp, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"feature","base":"main"}`); resp.StatusCode != 201 {
		t.Fatalf("the pull request: %d %v", resp.StatusCode, body)
	}
	work := t.TempDir()
	url := s.URL + "o/r.git"
	auth := basicHeader(tok)
	lsRemote := func() string {
		t.Helper()
		out, err := gitAt(t, work, "-c", auth, "ls-remote", url, "refs/pull/*")
		if err != nil {
			t.Fatalf("git ls-remote: %v: %s", err, out)
		}
		return out
	}
	if got := lsRemote(); got != feature+"\trefs/pull/1/head" {
		t.Fatalf("ls-remote refs/pull/*: %q, want the head %s", got, feature)
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", auth, "fetch", "-q", url, "refs/pull/1/head:refs/fetched"}} {
		if out, err := gitAt(t, work, args...); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	next, err := gitAt(t, work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", "-p", "refs/fetched", "-m", "three", "refs/fetched^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	out, err := gitAt(t, work, "-c", auth, "push", url, next+":refs/pull/1/head")
	if err == nil || !strings.Contains(out, "hidden ref") {
		t.Errorf("a push to refs/pull/1/head: %v: %s", err, out)
	}
	if got := lsRemote(); got != feature+"\trefs/pull/1/head" {
		t.Errorf("after a refused push, refs/pull/1/head: %q", got)
	}
	if out, err := gitAt(t, work, "-c", auth, "push", "-q", url, next+":refs/heads/feature"); err != nil {
		t.Fatalf("a push to the head branch: %v: %s", err, out)
	}
	if got := lsRemote(); got != next+"\trefs/pull/1/head" {
		t.Errorf("after a push to the head branch, refs/pull/1/head: %q, want %s", got, next)
	}
}
