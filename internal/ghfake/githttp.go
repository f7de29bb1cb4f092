package ghfake

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Git over HTTP: with Options.GitDir the fake serves the repository's git smart HTTP protocol at
// URL/<owner>/<repo>.git (and without .git), as github.com does at
// https://github.com/<owner>/<repo>.git, through git's own http-backend. As on GitHub for a
// private repository, a request authenticates with HTTP Basic whose password is a token the API
// takes (docs.github.com "Authenticating with an installation access token": the user name
// x-access-token, or any): none is 401 with a Basic challenge, a wrong one 401 as well; the
// read-only token may fetch but not push (403).
//
// As on GitHub, each pull request's head is also the ref refs/pull/<number>/head of the
// repository (docs.github.com "Checking out pull requests locally"), which a fetch reads and a
// push cannot change: the ref is read-only, hidden from a push, which git refuses as "deny
// updating a hidden ref". GitHub moves it when the head branch moves; the fake does once a
// push, a pull request or a ref the Git Data API writes lands (pullRefs), so a test may move it
// itself in GitDir to play GitHub's lag.

// maxGitBody is the largest request body the fake's git endpoint reads.
const maxGitBody = 64 << 20

// gitSuffixes are the smart-HTTP paths under a repository's URL.
var gitSuffixes = []string{"/info/refs", "/git-upload-pack", "/git-receive-pack"}

// gitPath is the part of p after /<owner>/<repo>[.git] when p is a smart-HTTP request to the
// fake's repository ("" and false otherwise).
func (s *Server) gitPath(p string) (string, bool) {
	if s.opts.GitDir == "" {
		return "", false
	}
	for _, suffix := range gitSuffixes {
		repo, ok := strings.CutSuffix(p, suffix)
		if !ok {
			continue
		}
		owner, name, ok := strings.Cut(strings.TrimPrefix(repo, "/"), "/")
		if ok && s.ours(owner, strings.TrimSuffix(name, ".git")) {
			return suffix, true
		}
	}
	return "", false
}

// basicToken is the password of the request's HTTP Basic authorization.
func basicToken(req *http.Request) string {
	scheme, enc, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return ""
	}
	_, pass, _ := strings.Cut(string(raw), ":")
	return pass
}

// serveGit answers a smart-HTTP request (suffix is its path after the repository), as the
// comment above says.
func (s *Server) serveGit(w http.ResponseWriter, req *http.Request, suffix string) {
	tok := basicToken(req)
	valid := tok != "" && (tok == s.opts.Token || tok == s.opts.ReadOnlyToken || s.isJobToken(tok))
	if !valid {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	push := suffix == "/git-receive-pack" || req.URL.Query().Get("service") == "git-receive-pack"
	if push && s.opts.ReadOnlyToken != "" && tok == s.opts.ReadOnlyToken {
		http.Error(w, "Permission to "+s.opts.Owner+"/"+s.opts.Repo+".git denied.", http.StatusForbidden)
		return
	}
	bin, err := exec.LookPath("git")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// CGI takes no chunked body (git sends one for a pack over http.postBuffer): it is read
	// whole, up to maxGitBody.
	body, err := io.ReadAll(io.LimitReader(req.Body, maxGitBody+1))
	if err != nil || len(body) > maxGitBody {
		http.Error(w, "the request body cannot be read, or is over the fake's limit", http.StatusRequestEntityTooLarge)
		return
	}
	dir := filepath.Dir(s.opts.GitDir)
	r := req.Clone(req.Context())
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	r.URL.Path = "/" + filepath.Base(s.opts.GitDir) + suffix
	h := &cgi.Handler{Path: bin, Args: []string{"http-backend"}, Dir: dir, Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + dir, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=" + s.actorOf(req),
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=receive.hideRefs", "GIT_CONFIG_VALUE_0=refs/pull"}}
	h.ServeHTTP(w, r)
	if suffix == "/git-receive-pack" {
		s.mu.Lock()
		s.pullRefs()
		s.mu.Unlock()
	}
}

// pullRefs points refs/pull/<number>/head at the head of each open pull request (see above);
// a merged or closed one's stays where it was. The caller holds mu.
func (s *Server) pullRefs() {
	for n, is := range s.issues {
		if !is.PR || is.State != "open" {
			continue
		}
		if sha := s.sha(is.Head); sha != "" {
			_ = s.git("update-ref", fmt.Sprintf("refs/pull/%d/head", n), sha)
		}
	}
}
