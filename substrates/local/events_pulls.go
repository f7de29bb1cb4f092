package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/store"
)

// A pull request's synchronize: a new head on an open pull request. The source lists the open
// pull requests and keeps each one's last head seen in the store; a head it has not seen fires
// synchronize, moved in the same transaction as the sessions it launches. A pull request seen for
// the first time (opened, or open when the source started) records its head and fires nothing:
// its opening fires opened.

// headKey is the store's meta key of pull request n's last head seen.
func headKey(n int) string { return headPrefix + strconv.Itoa(n) }

const headPrefix = "events.github.pull_head."

// pollHeads fires synchronize for every open pull request whose head moved since the last poll,
// and the reviews submitted on them (events_reviews.go).
func (es *EventSource) pollHeads(ctx context.Context, rep *PollReport) error {
	var open []*github.PullRequest
	var first *github.Response
	complete, fresh := false, false // every open pull request listed; a new list, not a 304
	for page := 1; page <= maxPages; page++ {
		var list []*github.PullRequest
		resp, err := es.get(ctx, fmt.Sprintf("repos/%s/%s/pulls?state=open&per_page=100&page=%d", es.owner, es.name, page), page == 1, &list)
		if err != nil {
			return err
		}
		if page == 1 {
			if first = resp; resp.StatusCode == 304 && !es.declares("pull_request_review") {
				return nil
			}
			if resp.StatusCode == 304 {
				// Unchanged: the pull requests of the last answer, whose reviews are still read.
				open = es.openPulls
				break
			}
			fresh = true
		}
		open = append(open, list...)
		if resp.NextPage == 0 {
			complete = true
			break
		}
	}
	es.openPulls = open
	if fresh && complete {
		if err := es.dropClosedHeads(ctx, open); err != nil {
			return err
		}
	}
	for _, pr := range open {
		if stop, err := es.head(ctx, rep, pr); err != nil || stop {
			es.forget(first)
			return err
		}
	}
	if es.declares("pull_request_review") {
		return es.pollReviews(ctx, rep, open)
	}
	return nil
}

// head handles one open pull request's head.
func (es *EventSource) head(ctx context.Context, rep *PollReport, pr *github.PullRequest) (bool, error) {
	n, sha := pr.GetNumber(), pr.GetHead().GetSHA()
	if sha == "" {
		return false, nil
	}
	key := headKey(n)
	var known bool
	err := es.r.Store.Tx(ctx, func(tx *store.Tx) error {
		_, ok, err := tx.Meta(key)
		if err != nil || ok {
			known = ok
			return err
		}
		return tx.SetMeta(key, sha) // first seen: its opening fires opened
	})
	if err != nil || !known {
		return false, err
	}
	ev := ghEvent{ID: int64(n), Name: "pull_request", Action: "synchronize", Ref: strconv.Itoa(n), Login: pr.GetUser().GetLogin(),
		Role: pr.GetAuthorAssociation(), Body: pr.GetBody(), SameRepo: strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), es.Repo()),
		Bot: strings.HasSuffix(pr.GetUser().GetLogin(), "[bot]"), HeadRef: pr.GetHead().GetRef(), HeadSHA: sha}
	return es.handleIf(ctx, rep, ev, key, sha, func(raw string) bool { return raw == sha })
}

// dropClosedHeads drops the last heads kept of the pull requests no longer open, open being every
// open one: a pull request reopened is seen anew (its reopening fires reopened).
func (es *EventSource) dropClosedHeads(ctx context.Context, open []*github.PullRequest) error {
	keep := make(map[string]bool, len(open))
	for _, pr := range open {
		keep[headKey(pr.GetNumber())] = true
	}
	return es.r.Store.Tx(ctx, func(tx *store.Tx) error {
		keys, _, err := tx.MetaPrefix(headPrefix)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if !keep[k] {
				if err := tx.DeleteMeta(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
