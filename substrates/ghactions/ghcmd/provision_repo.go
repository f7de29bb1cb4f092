package ghcmd

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// RepoFromRemote is OWNER/NAME of a git remote's URL on GitHub (https://github.com/O/N(.git),
// git@github.com:O/N(.git), ssh://git@github.com/O/N(.git)); anyHost accepts another host (a
// GitHub Enterprise Server named by GITHUB_API_URL).
func RepoFromRemote(remote string, anyHost bool) (string, bool) {
	remote = strings.TrimSpace(remote)
	var host, p string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		host, p = u.Hostname(), u.Path
	} else if at, rest, ok := strings.Cut(remote, "@"); ok && !strings.Contains(at, "/") {
		// scp-like: git@github.com:OWNER/NAME.git
		h, path, ok := strings.Cut(rest, ":")
		if !ok {
			return "", false
		}
		host, p = h, path
	} else {
		return "", false
	}
	if !anyHost && !strings.EqualFold(host, "github.com") {
		return "", false
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git"), "/"), "/")
	if len(parts) != 2 || !validName(parts[0]) || !validName(parts[1]) {
		return "", false
	}
	return parts[0] + "/" + parts[1], true
}

// validName is a GitHub owner or repository name: letters, digits, -, _ and . only.
func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// inferRepo reads OWNER/NAME from the git remote origin of the repository in the current
// directory, for provision without --repo.
func inferRepo(ctx context.Context, anyHost bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "remote", "get-url", "origin").Output()
	if err != nil {
		return "", fmt.Errorf("no --repo, and no git remote origin here to read it from: pass --repo OWNER/NAME")
	}
	repo, ok := RepoFromRemote(string(out), anyHost)
	if !ok {
		return "", fmt.Errorf("no --repo, and the git remote origin (%s) is not a GitHub repository: pass --repo OWNER/NAME", strings.TrimSpace(string(out)))
	}
	return repo, nil
}
