//go:build unix

package local

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// authSeen is an http git remote that refuses every request and records the Authorization
// headers it was sent.
type authSeen struct {
	mu   sync.Mutex
	auth []string
}

func (a *authSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.auth = append(a.auth, r.Header.Get("Authorization"))
	a.mu.Unlock()
	w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
	w.WriteHeader(http.StatusUnauthorized)
}

func (a *authSeen) sent(token string) (requests int, leaked bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	for _, h := range a.auth {
		leaked = leaked || strings.Contains(h, basic)
	}
	return len(a.auth), leaked
}

// headersSeen is a front of GitHub's git endpoint: it records each request's headers and passes
// it on.
type headersSeen struct {
	mu   sync.Mutex
	seen []http.Header
	to   http.Handler
}

func (h *headersSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Clone())
	h.mu.Unlock()
	h.to.ServeHTTP(w, r)
}

func (h *headersSeen) any(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, hd := range h.seen {
		if hd.Get(name) != "" {
			return true
		}
	}
	return false
}

// TestGitHubTransferReadsNoRepositoryConfig: the runner's push and fetch, which carry its token,
// read none of the repository's configuration, which a session can write: a proxy (http.proxy,
// http.<url>.proxy, one in a file include.path names), a header (http.<url>.extraHeader), a URL
// rewrite to another host (url.<base>.insteadOf) or origin pointed elsewhere send nothing
// anywhere but GitHub (GITHUB_SERVER_URL/OWNER/REPO.git), and the push and fetch land there. The
// scratch git directories are gone after.
func TestGitHubTransferReadsNoRepositoryConfig(t *testing.T) {
	g := newGHFlowRig(t)
	target, err := url.Parse(g.gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	front := &headersSeen{to: httputil.NewSingleHostReverseProxy(target)}
	github := httptest.NewServer(front)
	defer github.Close()
	proxy, other := &authSeen{}, &authSeen{}
	proxySrv, otherSrv := httptest.NewServer(proxy), httptest.NewServer(other)
	defer proxySrv.Close()
	defer otherSrv.Close()
	r := newRunner(t, g.dir, Options{Env: append(os.Environ(), "GH_TOKEN="+ghSecret, "GITHUB_API_URL="+g.gh.URL,
		"GITHUB_REPOSITORY=acme/app", "GITHUB_SERVER_URL="+github.URL)})
	ctx := t.Context()
	// No origin at all: the runner knows where GitHub is.
	gitRun(t, g.dir, "remote", "remove", "origin")
	gh, err := (&flow{r: r, repo: g.dir}).github(ctx)
	if err != nil {
		t.Fatalf("without an origin: %v", err)
	}
	if err := gh.push(ctx, g.dir, gitRun(t, g.dir, "rev-parse", "HEAD"), "autonomy/t/no-origin"); err != nil {
		t.Errorf("the push without an origin: %v", err)
	}
	gitRun(t, g.dir, "remote", "add", "origin", github.URL+"/acme/app.git")
	agents := filepath.Join(t.TempDir(), "agents.git")
	gitRun(t, g.dir, "init", "--quiet", "--bare", agents)
	include := filepath.Join(t.TempDir(), "planted.cfg")
	if err := os.WriteFile(include, []byte("[http]\n\tproxy = "+proxySrv.URL+"\n\tsslVerify = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, kv := range [][2]string{
		{"http.proxy", proxySrv.URL},
		{"http." + github.URL + "/.proxy", proxySrv.URL},
		{"http." + github.URL + "/.extraHeader", "X-Planted: yes"},
		{"url." + otherSrv.URL + "/.insteadOf", github.URL + "/"},
		{"include.path", include},
		{"remote.origin.url", agents},
	} {
		gitRun(t, g.dir, "config", kv[0], kv[1])
		gitRun(t, g.dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", kv[0])
		head := gitRun(t, g.dir, "rev-parse", "HEAD")
		branch := fmt.Sprintf("autonomy/t/%d", i)
		gh, err := (&flow{r: r, repo: g.dir}).github(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := gh.push(ctx, g.dir, head, branch); err != nil {
			t.Errorf("%s: the push failed: %v", kv[0], err)
		} else if got, _ := exec.Command("git", "--git-dir", g.bare, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output(); strings.TrimSpace(string(got)) != head {
			t.Errorf("%s: GitHub's %s is %s, want %s", kv[0], branch, got, head)
		}
		if sha, err := gh.fetchTarget(ctx, g.dir, "main"); err != nil || sha != gitRun(t, g.dir, "--git-dir", g.bare, "rev-parse", "main") {
			t.Errorf("%s: the fetch of GitHub's main: %s, %v", kv[0], sha, err)
		}
		if kv[0] == "remote.origin.url" {
			gitRun(t, g.dir, "remote", "set-url", "origin", github.URL+"/acme/app.git")
		} else {
			gitRun(t, g.dir, "config", "--unset-all", kv[0])
		}
	}
	if n, _ := proxy.sent(ghSecret); n != 0 {
		t.Errorf("the repository's proxy got %d request(s)", n)
	}
	if n, _ := other.sent(ghSecret); n != 0 {
		t.Errorf("the host the repository's url.insteadOf names got %d request(s)", n)
	}
	if front.any("X-Planted") {
		t.Error("GitHub was sent the repository's http.extraHeader")
	}
	if refs := gitRun(t, g.dir, "--git-dir", agents, "for-each-ref"); refs != "" {
		t.Errorf("the remote the repository's origin names got refs: %s", refs)
	}
	if left, _ := os.ReadDir(r.In.Path(StateDir + "/git")); len(left) != 0 {
		t.Errorf("scratch git directories left behind: %v", left)
	}
}

// A GITHUB_SERVER_URL that is no http(s) URL of a host is refused, naming it and the fix, before
// anything is pushed.
func TestGitHubServerURLChecked(t *testing.T) {
	g := newGHFlowRig(t)
	for _, bad := range []string{"ftp://github.com", "github.com", "https://", "https://x@github.com", "https://github.com?x=1"} {
		r := newRunner(t, g.dir, Options{Env: append(os.Environ(), "GH_TOKEN="+ghSecret, "GITHUB_API_URL="+g.gh.URL,
			"GITHUB_REPOSITORY=acme/app", "GITHUB_SERVER_URL="+bad)})
		if _, err := (&flow{r: r, repo: g.dir}).github(t.Context()); err == nil || !strings.Contains(err.Error(), "GITHUB_SERVER_URL") || !strings.Contains(err.Error(), "https://github.com") {
			t.Errorf("GITHUB_SERVER_URL=%s: %v", bad, err)
		}
	}
}

// The token goes to GitHub's server alone, in git's environment, and never into an error.
func TestGitHubTransferSendsTheToken(t *testing.T) {
	repo := t.TempDir()
	gitRun(t, repo, "init", "--quiet", "-b", "main")
	gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", "one")
	head := gitRun(t, repo, "rev-parse", "HEAD")
	const token = "ghs_runner_secret"
	github := &authSeen{}
	server := httptest.NewServer(github)
	defer server.Close()
	gh := &ghCode{token: token, server: server.URL, remote: server.URL + "/acme/app.git", scratch: filepath.Join(t.TempDir(), "git")}
	if err := gh.push(t.Context(), repo, head, "autonomy/dev/1"); err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("the push's error: %v", err)
	}
	if _, sent := github.sent(token); !sent {
		t.Error("GitHub's server was not sent the token")
	}
}

// A proposal's branch on GitHub is autonomy/<actor>/<its work item> (a number in its one
// spelling: +42 and 042 are 42, one branch and one pull request), or its session's id when
// the work item makes no valid branch name ("#", "#/x", "a..b": the push would fail for good).
func TestCodeFlowBranchOfAHostileSubject(t *testing.T) {
	r := newRunner(t, installFleet(t, resumeFleet, false), Options{})
	for ref, want := range map[string]string{"#42": "autonomy/writer/42", "42/x": "autonomy/writer/42/x", "+42": "autonomy/writer/42", "042": "autonomy/writer/42", "0x2A": "autonomy/writer/0x2A",
		"#": "", "#/x": "", "a..b": "", "x.lock": "", "": "", "#-x": "autonomy/writer/-x"} {
		var s store.Session
		if err := r.Store.Tx(t.Context(), func(tx *store.Tx) error {
			s = store.Session{Actor: "writer", Kind: "agent", Status: ir.Done, Origin: "operator", Ref: ref, CreatedAt: time.Now()}
			return tx.Insert(&s)
		}); err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = "autonomy/writer/" + s.ID
		}
		if got := (&flow{r: r, p: store.Proposal{Session: s.ID, Actor: "writer"}}).ghBranch(t.Context()); got != want {
			t.Errorf("ref %q: branch %q, want %q", ref, got, want)
		}
	}
}
