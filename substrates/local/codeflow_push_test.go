//go:build unix

package local

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
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

// The runner's GitHub token goes with a proposal's push to GitHub's server alone: an origin on
// another host (a mirror, a remote an agent's change pointed elsewhere) is pushed to on GitHub
// instead, and a push that reaches another host all the same (the repository's url.insteadOf)
// carries no token.
func TestCodeFlowTokenGoesToGitHubOnly(t *testing.T) {
	repo := t.TempDir()
	gitRun(t, repo, "init", "--quiet", "-b", "main")
	gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", "one")
	head := gitRun(t, repo, "rev-parse", "HEAD")

	if got := pushURL("https://mirror.example/acme/app.git", "https://github.com", "acme", "app"); got != "https://github.com/acme/app.git" {
		t.Errorf("an origin on another host is pushed to as %s, want GitHub's", got)
	}
	if got := pushURL("https://github.com/acme/app", "https://github.com", "acme", "app"); got != "https://github.com/acme/app" {
		t.Errorf("an origin on GitHub is pushed to as %s", got)
	}

	const token = "ghs_runner_secret"
	other := &authSeen{}
	elsewhere := httptest.NewServer(other)
	defer elsewhere.Close()
	gh := &ghCode{token: token, server: "https://github.com", remote: elsewhere.URL + "/acme/app.git"}
	if err := gh.push(t.Context(), repo, head, "autonomy/dev/1"); err == nil {
		t.Fatal("the push to a refusing remote succeeded")
	}
	if n, leaked := other.sent(token); n == 0 || leaked {
		t.Errorf("another host got %d request(s), the runner's token in one: %v", n, leaked)
	}

	github := &authSeen{}
	server := httptest.NewServer(github)
	defer server.Close()
	gh = &ghCode{token: token, server: server.URL, remote: server.URL + "/acme/app.git"}
	if err := gh.push(t.Context(), repo, head, "autonomy/dev/1"); err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("the push's error: %v", err)
	}
	if _, sent := github.sent(token); !sent {
		t.Error("GitHub's server was not sent the token")
	}
}

// A proposal's branch on GitHub is autonomy/<actor>/<its work item>, or its session's id when
// the work item makes no valid branch name ("#", "#/x", "a..b": the push would fail for good).
func TestCodeFlowBranchOfAHostileSubject(t *testing.T) {
	r := newRunner(t, installFleet(t, resumeFleet, false), Options{})
	for ref, want := range map[string]string{"#42": "autonomy/writer/42", "42/x": "autonomy/writer/42/x",
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
