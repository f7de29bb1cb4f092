// Package ghlimit reads GitHub's rate limits off a failed go-github call: whether it was one,
// which, and how long to wait before the next request. The GitHub runner and the local event
// source both sit them out with it.
package ghlimit

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

const (
	// ResetBuffer is waited past a primary limit's reset: GitHub's clock is not ours.
	ResetBuffer = time.Second
	// UnknownWait is GitHub's advice when a rate limit names no time: wait at least a minute.
	UnknownWait = time.Minute
)

// Wait says whether err is a rate limit, which ("primary" or "secondary"), and how long after
// now to wait before retrying: until the primary limit's reset, for a secondary limit or a 429
// its Retry-After, a minute when GitHub names no time.
func Wait(err error, now time.Time) (time.Duration, string, bool) {
	until := func(reset time.Time) time.Duration { return max(reset.Sub(now)+ResetBuffer, 0) }
	var primary *github.RateLimitError
	if errors.As(err, &primary) {
		if primary.Rate.Reset.IsZero() {
			return UnknownWait, "primary", true
		}
		return until(primary.Rate.Reset.Time), "primary", true
	}
	var secondary *github.AbuseRateLimitError
	if errors.As(err, &secondary) {
		if secondary.RetryAfter == nil {
			return UnknownWait, "secondary", true
		}
		return max(*secondary.RetryAfter, 0), "secondary", true
	}
	// go-github types only 403s; GitHub answers either limit with 429 too.
	var resp *github.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		return 0, "", false
	}
	h := resp.Response.Header
	exhausted := h.Get("X-RateLimit-Remaining") == "0"
	switch code := resp.Response.StatusCode; {
	case code == http.StatusTooManyRequests, code == http.StatusForbidden && (exhausted || strings.Contains(strings.ToLower(resp.Message), "rate limit")):
	default:
		return 0, "", false
	}
	kind := "secondary"
	if exhausted {
		kind = "primary"
	}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil { // GitHub gives seconds
		return max(time.Duration(secs)*time.Second, 0), kind, true
	}
	if secs, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && exhausted {
		return until(time.Unix(secs, 0)), kind, true
	}
	return UnknownWait, kind, true
}
