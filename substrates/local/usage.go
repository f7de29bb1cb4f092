package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
)

// SessionUsage is what session id's model proxy counted; ok is false for a session that ran
// without one (a script, a person, an agent without the credential in the runner's environment).
func (r *Runner) SessionUsage(ctx context.Context, id string) (store.Usage, bool, error) {
	return r.Store.GetUsage(ctx, id)
}

// SumUsage sums the usage recorded since (everything when zero), of one actor when actor is not "".
func (r *Runner) SumUsage(ctx context.Context, since time.Time, actor string) (store.Usage, error) {
	return r.Store.SumUsage(ctx, since, actor)
}

// Transcript copies session id's transcript (JSON lines, one modelproxy.Entry each) to w.
func (r *Runner) Transcript(ctx context.Context, id string, w io.Writer) error {
	if _, ok, err := r.Store.Get(ctx, id); err != nil {
		return err
	} else if !ok {
		return &RefusedError{Msg: NoSession(id)}
	}
	path, _ := r.In.TranscriptPath(id)
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &RefusedError{Msg: fmt.Sprintf("session %s has no transcript: only a preset's session run with its credential in the runner's environment has one (docs/local.md)", id)}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// ParseSince reads a --since value: a duration back from now (90m, 24h, 7d), a date (2026-03-01,
// midnight in loc) or an RFC 3339 time.
func ParseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q is not a duration (24h, 7d), a date (2006-01-02) or an RFC 3339 time", s)
}

// Location is the installation's timezone (policy.box.local.timezone): where a day starts.
func (r *Runner) Location() *time.Location { return r.In.Location }

// Now is the runner's clock.
func (r *Runner) Now() time.Time { return r.opts.Now() }

// PrintUsage prints u as the CLI shows it, one figure a line, each label padded to width.
func PrintUsage(w io.Writer, u store.Usage) {
	est := ""
	if u.Estimated {
		est = " (some estimated from response sizes)"
	}
	fmt.Fprintf(w, "%-10s %d\n", "requests:", u.Requests)
	fmt.Fprintf(w, "%-10s %d in (%d cached), %d out%s\n", "tokens:", u.InputTokens, u.CachedInputTokens, u.OutputTokens, est)
	fmt.Fprintf(w, "%-10s $%.4f\n", "cost:", u.CostUSD)
}
