// Package gitremote reads a git remote's URL as a GitHub repository: the one reading the local
// event source, doctor and provision share.
package gitremote

import (
	"net/url"
	"strings"
)

// GitHubHost is the host of github.com remotes.
const GitHubHost = "github.com"

// Remote is a repository a remote URL names: its host (lower case, without a port) and
// OWNER/NAME.
type Remote struct {
	Host, Owner, Name string
}

// Repo is OWNER/NAME.
func (r Remote) Repo() string { return r.Owner + "/" + r.Name }

// OnGitHub reports whether the remote is on github.com.
func (r Remote) OnGitHub() bool { return r.Host == GitHubHost }

// Parse reads a remote URL as git writes them: a URL (https://host/O/N, ssh://git@host[:port]/O/N,
// git://host/O/N, with user info or not) or scp-like ([user@]host:O/N), each with or without
// a .git suffix and a trailing slash, surrounding space ignored (git's output ends in a
// newline). The path must be exactly OWNER/NAME, each a GitHub name (letters, digits, '-',
// '_' and '.', not "." or ".."); anything else, a local path among them, is not a repository
// (false).
func Parse(remote string) (Remote, bool) {
	remote = strings.TrimSpace(remote)
	var host, p string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" && strings.Contains(remote, "://") {
		host, p = u.Hostname(), u.Path
	} else if h, path, ok := scpLike(remote); ok {
		host, p = h, path
	} else {
		return Remote{}, false
	}
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if host == "" || len(parts) != 2 || !validName(parts[0]) || !validName(parts[1]) {
		return Remote{}, false
	}
	return Remote{Host: strings.ToLower(host), Owner: parts[0], Name: parts[1]}, true
}

// GitHubRepo is OWNER/NAME of a remote URL on github.com (see Parse), or false.
func GitHubRepo(remote string) (string, bool) {
	r, ok := Parse(remote)
	if !ok || !r.OnGitHub() {
		return "", false
	}
	return r.Repo(), true
}

// scpLike splits git's scp-like syntax, [user@]host:path: a colon before any slash, no "://",
// and a host longer than one letter (C:/path is a Windows path, not a remote).
func scpLike(s string) (host, path string, ok bool) {
	if strings.Contains(s, "://") {
		return "", "", false
	}
	before, path, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(before, "/") {
		return "", "", false
	}
	if at := strings.LastIndex(before, "@"); at >= 0 {
		before = before[at+1:]
	}
	if len(before) < 2 {
		return "", "", false
	}
	return before, path, true
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
