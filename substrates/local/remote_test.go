package local

import (
	"context"
	"os/exec"
	"testing"
)

// gitRepoWithRemotes is a new git repository whose remotes are named by remotes (name → URL).
func gitRepoWithRemotes(t *testing.T, remotes map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	cmds := [][]string{{"init", "-q"}}
	for name, u := range remotes {
		cmds = append(cmds, []string{"remote", "add", name, u})
	}
	for _, args := range cmds {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestOriginRepoReadsGitHubRemotes: the event source's repository is the origin remote's when
// that is a repository on github.com, in every form git writes (internal/gitremote), and no
// other host's, even one whose name ends in github.com.
func TestOriginRepoReadsGitHubRemotes(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"git@github.com:acme/app.git":          "acme/app",
		"https://github.com/acme/app/":         "acme/app",
		"ssh://git@github.com:22/acme/app.git": "acme/app",
		"https://notgithub.com/acme/app.git":   "",
		"https://ghe.example.com/acme/app.git": "",
		"https://github.com/acme":              "",
	} {
		if got := originRepo(gitRepoWithRemotes(t, map[string]string{"origin": remote})); got != want {
			t.Errorf("origin %s: %q, want %q", remote, got, want)
		}
	}
	if got := originRepo(t.TempDir()); got != "" {
		t.Errorf("not a repository: %q", got)
	}
}

// TestHasGitHubRemote: doctor checks gh when any remote is a repository on github.com, not when
// a remote merely has github.com in its URL.
func TestHasGitHubRemote(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		remotes map[string]string
		want    bool
	}{
		{map[string]string{"origin": "https://gitlab.com/acme/app.git", "upstream": "git@github.com:acme/app.git"}, true},
		{map[string]string{"origin": "https://gitlab.com/mirrors/github.com.git"}, false},
		{map[string]string{"origin": "https://notgithub.com/acme/app.git"}, false},
		{nil, false},
	} {
		if got := hasGitHubRemote(context.Background(), gitRepoWithRemotes(t, tt.remotes)); got != tt.want {
			t.Errorf("remotes %v: %v, want %v", tt.remotes, got, tt.want)
		}
	}
}
