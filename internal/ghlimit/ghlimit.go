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
	// MaxWait is the longest wait Wait returns, whatever GitHub names (a Retry-After of years, a
	// reset far off): the caller tries again then, and waits again if the limit still holds.
	MaxWait = time.Hour
)

// Wait says whether err is a rate limit, which ("primary" or "secondary"), and how long after
// now to wait before retrying: until the primary limit's reset, for a secondary limit or a 429
// its Retry-After, a minute when GitHub names no time; never more than MaxWait.
func Wait(err error, now time.Time) (time.Duration, string, bool) {
	d, kind, ok := wait(err, now)
	return min(d, MaxWait), kind, ok
}

// wait is Wait uncapped (a duration that would overflow is MaxWait).
func wait(err error, now time.Time) (time.Duration, string, bool) {
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
	if secs, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64); err == nil { // GitHub gives seconds
		return time.Duration(min(max(secs, 0), int64(MaxWait/time.Second))) * time.Second, kind, true
	}
	if secs, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && exhausted {
		if secs-now.Unix() > int64(MaxWait/time.Second) { // far off, or past what time.Unix holds
			return MaxWait, kind, true
		}
		return until(time.Unix(secs, 0)), kind, true
	}
	return UnknownWait, kind, true
}
