package gitremote

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		remote, host, repo string // host "" when it is not a repository
	}{
		{"https://github.com/acme/app.git\n", "github.com", "acme/app"},
		{"https://github.com/acme/app", "github.com", "acme/app"},
		{"https://github.com/acme/app/", "github.com", "acme/app"},
		{"https://github.com/acme/app.git/", "github.com", "acme/app"},
		{"http://github.com/acme/app", "github.com", "acme/app"},
		{"https://user:tok@github.com/acme/app.git", "github.com", "acme/app"},
		{"https://GitHub.com/Acme/App", "github.com", "Acme/App"},
		{"https://github.com:443/acme/app", "github.com", "acme/app"},
		{"git@github.com:acme/app.git", "github.com", "acme/app"},
		{"git@github.com:acme/app", "github.com", "acme/app"},
		{"git@github.com:/acme/app.git", "github.com", "acme/app"},
		{"github.com:acme/app.git", "github.com", "acme/app"},
		{"ssh://git@github.com/acme/my.app.git", "github.com", "acme/my.app"},
		{"ssh://git@github.com:22/acme/app.git", "github.com", "acme/app"},
		{"git://github.com/acme/app.git", "github.com", "acme/app"},
		{"https://github.com/acme_emu/app", "github.com", "acme_emu/app"},
		{"https://ghe.example.com/acme/app.git", "ghe.example.com", "acme/app"},
		{"git@ghe.example.com:acme/app.git", "ghe.example.com", "acme/app"},
		{"https://gitlab.com/acme/app.git", "gitlab.com", "acme/app"},
		{"https://notgithub.com/acme/app.git", "notgithub.com", "acme/app"},
		{"https://github.com/acme/app/extra", "", ""},
		{"https://github.com/acme", "", ""},
		{"https://github.com/", "", ""},
		{"https://github.com/../app", "", ""},
		{"/srv/git/app.git", "", ""},
		{"../github.com/acme/app", "", ""},
		{"file:///srv/github.com/acme/app.git", "", ""},
		{"C:/acme/app", "", ""},
		{"git@github.com:acme/$(rm -rf).git", "", ""},
		{"git@github.com:acme/app name.git", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		r, ok := Parse(tt.remote)
		if ok != (tt.host != "") || r.Host != tt.host || (ok && r.Repo() != tt.repo) {
			t.Errorf("Parse(%q) = %+v, %v; want host %q, repo %q", tt.remote, r, ok, tt.host, tt.repo)
		}
	}
}

func TestGitHubRepo(t *testing.T) {
	for remote, want := range map[string]string{
		"git@github.com:acme/app.git\n":         "acme/app",
		"https://github.com/acme/app/":          "acme/app",
		"https://ghe.example.com/acme/app.git":  "",
		"https://notgithub.com/acme/app.git":    "",
		"https://github.com.evil.com/acme/app":  "",
		"https://gitlab.com/github.com/app.git": "",
	} {
		if got, ok := GitHubRepo(remote); got != want || ok != (want != "") {
			t.Errorf("GitHubRepo(%q) = %q, %v; want %q", remote, got, ok, want)
		}
	}
}
