package local

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/google/go-github/v62/github"
)

// The runner's own GitHub, for codeHost github: the event source reads it, and the supervisor of
// a session writes the session's effects to it (hands_github.go), with the runner's token, which
// no session receives.

// runnerToken is the runner's GitHub token in env: GH_TOKEN, else GITHUB_TOKEN.
func runnerToken(env []string) string {
	if t := sessionenv.Lookup(env, "GH_TOKEN"); t != "" {
		return t
	}
	return sessionenv.Lookup(env, "GITHUB_TOKEN")
}

// githubRepo is the repository of codeHost github: boxRepo (policy.box.local.events.repo), else
// envRepo (GITHUB_REPOSITORY), else the origin remote's when it is on github.com.
func (r *Runner) githubRepo(boxRepo, envRepo string) (owner, name string, err error) {
	repo := boxRepo
	if repo == "" {
		repo = envRepo
	}
	if repo == "" {
		repo = originRepo(r.In.Dir)
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !repoName().MatchString(repo) {
		return "", "", fmt.Errorf("cannot tell which GitHub repository this is (%q): set policy.box.local.events.repo to owner/name, or GITHUB_REPOSITORY", repo)
	}
	return owner, name, nil
}

// githubClient is a client of the API at baseURL ("" for https://api.github.com/) with token,
// whose answers are capped (maxAnswer), over hc (one with a one-minute timeout when nil).
func githubClient(token, baseURL string, hc *http.Client) (*github.Client, error) {
	c := &http.Client{Timeout: time.Minute}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = cappedTransport{base: base, max: maxAnswer}
	gc := github.NewClient(c).WithAuthToken(token)
	if baseURL != "" {
		u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("GITHUB_API_URL %q: give the API root as an http(s) URL, like https://api.github.com/", baseURL)
		}
		gc.BaseURL = u
	}
	return gc, nil
}
