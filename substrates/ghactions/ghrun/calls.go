// API calls of the GitHub runner: rate limits waited out, errors made plain.

package ghrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghlimit"
)

// do makes one API call, sitting out rate limits: GitHub's primary limit (until its reset),
// its secondary limit and 429 (for their Retry-After), each wait bounded by MaxRetryWait and
// at most maxRetries times. go-github refuses calls locally while it knows a limit is in force;
// a wait lasts until the limit lifts, so the retry goes out. A 202 Accepted is a success.
func (r *Runner) do(ctx context.Context, call func(context.Context) (*github.Response, error)) (*github.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := call(ctx)
		var accepted *github.AcceptedError
		if err == nil || errors.As(err, &accepted) {
			return resp, nil
		}
		wait, kind, limited := r.rateLimitWait(err)
		if !limited {
			return resp, err
		}
		at := r.opts.Now().Add(wait).UTC().Truncate(time.Second)
		if wait > r.opts.MaxRetryWait {
			return resp, &rateLimitedError{kind: kind, until: at, wait: wait, maxWait: r.opts.MaxRetryWait, err: err}
		}
		if attempt == maxRetries {
			return resp, &rateLimitedError{kind: kind, until: at, wait: wait, tries: attempt + 1, err: err}
		}
		if err := sleep(ctx, wait); err != nil {
			return resp, fmt.Errorf("waiting out GitHub's %s rate limit: %w", kind, err)
		}
	}
}

// rateLimitedError is a call given up on because of a rate limit.
type rateLimitedError struct {
	kind    string
	until   time.Time
	wait    time.Duration
	maxWait time.Duration // set when the wait was too long
	tries   int           // set when the retries ran out
	err     error
}

func (e *rateLimitedError) Error() string {
	if e.tries > 0 {
		return fmt.Sprintf("GitHub's %s rate limit was still in force after %d tries; retry after %s", e.kind, e.tries, e.until.Format(time.RFC3339))
	}
	return fmt.Sprintf("GitHub's %s rate limit is in force for %s more, longer than this runner waits (%s); retry after %s", e.kind, e.wait.Round(time.Second), e.maxWait, e.until.Format(time.RFC3339))
}

func (e *rateLimitedError) Unwrap() error { return e.err }

// rateLimitWait says whether err is a rate limit, which, and how long to wait before retrying.
func (r *Runner) rateLimitWait(err error) (time.Duration, string, bool) {
	return ghlimit.Wait(err, r.opts.Now())
}

// fail describes a failed call for a person: what was being done, and what to do about it.
// perm is the permission the call needs.
func (r *Runner) fail(what, perm string, err error) error {
	var limited *rateLimitedError
	if errors.As(err, &limited) {
		return fmt.Errorf("%s: %w", what, err)
	}
	var resp *github.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	code, msg := resp.Response.StatusCode, resp.Message
	if msg == "" {
		msg = http.StatusText(code)
	}
	var text string
	switch code {
	case http.StatusUnauthorized:
		text = fmt.Sprintf("GitHub rejected the token (401 %s): it is invalid, expired or revoked; give a valid one in GITHUB_TOKEN or GH_TOKEN", msg)
	case http.StatusForbidden:
		resource, level, _ := strings.Cut(perm, ": ")
		fine := "Read-only"
		if level == "write" {
			fine = "Read and write"
		}
		text = fmt.Sprintf("the token lacks access (403 %s): it needs %s on %s (a fine-grained token: %s%s: %s; a classic token: the repo scope)", msg, perm, r.opts.Repo, strings.ToUpper(resource[:1]), resource[1:], fine)
	case http.StatusNotFound:
		text = "not found (404): no such repository, or the token cannot see it"
	case http.StatusUnprocessableEntity:
		text = fmt.Sprintf("GitHub refused the request (422): %s", strings.ReplaceAll(msg, "\n\n", " "))
	default:
		text = fmt.Sprintf("GitHub answered %d: %s", code, msg)
	}
	return &apiError{msg: what + ": " + text, err: err}
}

// apiError is a failed call described for a person, keeping GitHub's error for errors.As.
type apiError struct {
	msg string
	err error
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

// statusOf is the HTTP status of an API error, 0 for none.
func statusOf(err error) int {
	var resp *github.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		return resp.Response.StatusCode
	}
	return 0
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
