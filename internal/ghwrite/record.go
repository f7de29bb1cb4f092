package ghwrite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v62/github"
)

// Write is one request a Repo sends that GitHub records as an event of the repository: what the
// local runner's event source must know was the runner's own, so that a session's effect, sent
// with the operator's token, does not fire actors as if the operator had acted.
type Write struct {
	// Kind is comment, issue (a new issue), labeled or unlabeled.
	Kind string
	// Item is the issue or pull request written on; 0 for a new issue.
	Item int
	// Title and Body are a new issue's, as sent; Body a comment's.
	Title, Body string
	// Label is the label added or removed; for a new issue, Labels are those it is opened with.
	Label  string
	Labels []string
}

// Recorder is told of a write before it is sent, and may refuse it (then nothing is sent); the
// function it returns is told how the write ended (Ended).
type Recorder func(ctx context.Context, w Write) (done func(Ended), err error)

// Ended is how a write ended.
type Ended struct {
	// ID is the comment's id or the new issue's number (0 for a label, or when it failed).
	ID  int64
	Err error
	// Answered says GitHub answered a failed write (then nothing was written).
	Answered bool
	// At is the time GitHub's answer carried (its Date header, on GitHub's clock), zero when
	// there was no answer or it carried none.
	At time.Time
}

// send makes the request do, told to r.Record first when it is set.
func (r Repo) send(ctx context.Context, w Write, do func() (int64, *github.Response, error)) error {
	if r.Record == nil {
		_, _, err := do()
		return err
	}
	done, err := r.Record(ctx, w)
	if err != nil {
		return fmt.Errorf("the write was not recorded, so it was not sent: %w", err)
	}
	id, resp, err := do()
	e := Ended{ID: id, Err: err, Answered: answered(err)}
	if resp != nil && resp.Response != nil {
		e.At, _ = http.ParseTime(resp.Header.Get("Date"))
	}
	done(e)
	return err
}

// answered reports whether err is GitHub's answer refusing a request (a 4xx or a rate limit: it
// wrote nothing), not a failure to learn how it ended (no answer, or a 5xx, which a proxy may give
// for a request GitHub carried out).
func answered(err error) bool {
	var ge *github.ErrorResponse
	var rl *github.RateLimitError
	var al *github.AbuseRateLimitError
	if errors.As(err, &ge) {
		return ge.Response != nil && ge.Response.StatusCode < 500
	}
	return errors.As(err, &rl) || errors.As(err, &al)
}
