package local

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/store"
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
		if repo = originRepo(r.In.Dir); repoName().MatchString(repo) {
			// The origin remote is in a config a session can write while it runs: the repository
			// it named first is the one, and another later is refused.
			if repo, err = r.pin("github-repo-from-origin", repo, "the origin remote", "policy.box.local.events.repo (owner/name) or GITHUB_REPOSITORY"); err != nil {
				return "", "", err
			}
		}
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

// pin is derived, read from a file a session can write while it runs (the origin remote, the
// installation root's checked-out branch), as this installation first read it: stored under key
// the first time, and an error naming set (the setting that names it for good) when it reads
// otherwise later.
func (r *Runner) pin(key, derived, what, set string) (string, error) {
	var pinned string
	err := r.Store.Tx(context.Background(), func(tx *store.Tx) error {
		v, ok, err := tx.Meta(key)
		if err != nil || ok {
			pinned = v
			return err
		}
		pinned = derived
		return tx.SetMeta(key, derived)
	})
	if err != nil {
		return "", err
	}
	if pinned != derived {
		return "", fmt.Errorf("%s now names %s, but this installation has used %s since it first read it, and a session can change %s: set %s to the one you mean", what, derived, pinned, what, set)
	}
	return derived, nil
}
