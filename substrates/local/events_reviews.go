package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/store"
)

// pull_request_review, submitted: the source lists each open pull request's reviews (one
// conditional request each, which costs no rate limit while nothing changed) and keeps, per pull
// request, the highest review id handled. The first poll of an installation records the reviews
// of the pull requests open then; a pull request without a record afterwards is new since, and
// all its reviews fire.

// reviewsStartedKey marks that the first poll recorded the reviews of the open pull requests.
const reviewsStartedKey = "events.github.reviews.started"

// reviewsKey is the store's meta key of pull request n's highest review id handled.
func reviewsKey(n int) string { return "events.github.reviews." + strconv.Itoa(n) }

// pollReviews fires the reviews submitted on the open pull requests since the last poll.
func (es *EventSource) pollReviews(ctx context.Context, rep *PollReport, open []*github.PullRequest) error {
	started := false
	err := es.r.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		_, started, err = tx.Meta(reviewsStartedKey)
		return err
	})
	if err != nil {
		return err
	}
	for _, pr := range open {
		if stop, err := es.reviews(ctx, rep, pr, started); err != nil || stop {
			return err
		}
	}
	if !started {
		rep.First = true
		return es.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(reviewsStartedKey, "1") })
	}
	return nil
}

// reviews handles the reviews of one open pull request.
func (es *EventSource) reviews(ctx context.Context, rep *PollReport, pr *github.PullRequest, started bool) (bool, error) {
	n := pr.GetNumber()
	path := fmt.Sprintf("repos/%s/%s/pulls/%d/reviews?per_page=100", es.owner, es.name, n)
	// Reviews are listed oldest first: a new one may be on a later page while the first is
	// unchanged, so only a list of one page is read conditionally.
	var list []*github.PullRequestReview
	var resp *github.Response
	for page := 1; page <= maxPages; page++ {
		var part []*github.PullRequestReview
		r, err := es.get(ctx, fmt.Sprintf("%s&page=%d", path, page), page == 1 && !es.multiPage[path], &part)
		if err != nil {
			return false, err
		}
		if page == 1 {
			if resp = r; r.StatusCode == 304 {
				return false, nil
			}
		}
		list = append(list, part...)
		es.multiPage[path] = page > 1 || r.NextPage != 0
		if r.NextPage == 0 {
			break
		}
	}
	key := reviewsKey(n)
	cur, _, known, err := es.cursor(ctx, key)
	if err != nil {
		return false, err
	}
	if !started && !known {
		var top int64
		for _, rv := range list {
			top = max(top, rv.GetID())
		}
		return false, es.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(key, strconv.FormatInt(top, 10)) })
	}
	for _, rv := range list {
		if rv.GetID() <= cur || rv.GetState() == "PENDING" {
			continue
		}
		login := rv.GetUser().GetLogin()
		ev := ghEvent{ID: rv.GetID(), Name: "pull_request_review", Action: "submitted", Ref: strconv.Itoa(n), Login: login,
			Role: rv.GetAuthorAssociation(), Body: rv.GetBody(), Bot: strings.HasSuffix(login, "[bot]")}
		if stop, err := es.handle(ctx, rep, ev, key, strconv.FormatInt(rv.GetID(), 10)); err != nil || stop {
			es.forget(resp)
			return stop, err
		}
	}
	return false, nil
}
