package ghcmd

import "testing"

func TestRepoFromRemote(t *testing.T) {
	tests := []struct {
		remote  string
		anyHost bool
		want    string
	}{
		{"https://github.com/acme/app.git\n", false, "acme/app"},
		{"https://github.com/acme/app", false, "acme/app"},
		{"https://user:tok@github.com/acme/app.git", false, "acme/app"},
		{"git@github.com:acme/app.git", false, "acme/app"},
		{"ssh://git@github.com/acme/my.app.git", false, "acme/my.app"},
		{"https://gitlab.com/acme/app.git", false, ""},
		{"https://ghe.example.com/acme/app.git", true, "acme/app"},
		{"https://github.com/acme/app/extra", false, ""},
		{"https://github.com/acme", false, ""},
		{"/srv/git/app.git", false, ""},
		{"git@github.com:acme/$(rm -rf).git", false, ""},
		{"", false, ""},
	}
	for _, tt := range tests {
		got, ok := RepoFromRemote(tt.remote, tt.anyHost)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("RepoFromRemote(%q, %v) = %q, %v; want %q", tt.remote, tt.anyHost, got, ok, tt.want)
		}
	}
}
