package ghlimit

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
)

func limited(code int, header map[string]string) error {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	return &github.ErrorResponse{Response: &http.Response{StatusCode: code, Header: h}, Message: "API rate limit exceeded"}
}

// TestWaitIsCapped: however long GitHub says to wait (a Retry-After of years, one that would
// overflow a Duration, a reset far off), Wait returns at most MaxWait; a negative one is no wait.
func TestWaitIsCapped(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	far := 999999999 * time.Second
	for name, c := range map[string]struct {
		err  error
		want time.Duration
	}{
		"Retry-After 30":          {limited(429, map[string]string{"Retry-After": "30"}), 30 * time.Second},
		"Retry-After 999999999":   {limited(429, map[string]string{"Retry-After": "999999999"}), MaxWait},
		"Retry-After overflowing": {limited(429, map[string]string{"Retry-After": "9223372036854775807"}), MaxWait},
		"Retry-After negative":    {limited(429, map[string]string{"Retry-After": "-5"}), 0},
		"reset far off": {limited(403, map[string]string{"X-RateLimit-Remaining": "0",
			"X-RateLimit-Reset": strconv.FormatInt(now.Add(far).Unix(), 10)}), MaxWait},
		"reset at the end of time": {limited(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9223372036854775807"}), MaxWait},
		"primary far off":          {&github.RateLimitError{Rate: github.Rate{Reset: github.Timestamp{Time: now.Add(far)}}}, MaxWait},
		"secondary far off":        {&github.AbuseRateLimitError{RetryAfter: &far}, MaxWait},
		"secondary in a minute":    {&github.AbuseRateLimitError{RetryAfter: func() *time.Duration { d := time.Minute; return &d }()}, time.Minute},
	} {
		got, _, ok := Wait(c.err, now)
		if !ok || got != c.want {
			t.Errorf("%s: %s %t, want %s", name, got, ok, c.want)
		}
	}
}
