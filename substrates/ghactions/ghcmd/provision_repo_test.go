package ghcmd

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestInferRepo: provision reads OWNER/NAME from the origin remote, on github.com, or on another
// host when GITHUB_API_URL names a GitHub Enterprise Server (anyHost); no origin, or one that is
// not a repository on an allowed host, is an error that says to pass --repo. (internal/gitremote
// tests the URL forms.)
func TestInferRepo(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if _, err := inferRepo(context.Background(), false); err == nil || !strings.Contains(err.Error(), "pass --repo") {
		t.Errorf("no origin: %v", err)
	}
	for _, tt := range []struct {
		remote  string
		anyHost bool
		want    string
	}{
		{"git@github.com:acme/app.git", false, "acme/app"},
		{"https://github.com/acme/app/", false, "acme/app"},
		{"https://ghe.example.com/acme/app.git", true, "acme/app"},
		{"https://ghe.example.com/acme/app.git", false, ""},
		{"https://github.com/acme", true, ""},
	} {
		_ = exec.Command("git", "remote", "remove", "origin").Run()
		git("remote", "add", "origin", tt.remote)
		got, err := inferRepo(context.Background(), tt.anyHost)
		if got != tt.want || (err == nil) != (tt.want != "") || err != nil && !strings.Contains(err.Error(), "pass --repo") {
			t.Errorf("origin %s, anyHost %v: %q, %v; want %q", tt.remote, tt.anyHost, got, err, tt.want)
		}
	}
}
