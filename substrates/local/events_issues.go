package local

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"
)

// The issues and pull requests of the repository as the event source reads them: a new number
// in the issue list is an item opened (issues, or pull_request and pull_request_target for a pull
// request); the repository's issue events are the rest of their activity it polls.

// PolledActions are the activities of issues, pull_request and pull_request_target the source
// sees: opened from the issue list, the others from the issue events; a pull request's
// synchronize (a new head) from the open pull requests (events_pulls.go). Others (edited,
// ready_for_review, …) never fire locally.
var PolledActions = []string{"opened", "labeled", "unlabeled", "closed", "reopened", "assigned", "unassigned"}

// polledActions are the activities of event the source sees.
func polledActions(event string) []string {
	switch event {
	case "issue_comment":
		return []string{"created"}
	case "pull_request_review":
		return []string{"submitted"}
	case "pull_request", "pull_request_target":
		return append(slices.Clone(PolledActions), "synchronize")
	}
	return PolledActions
}

// The store's cursors of the issue list (the highest number handled) and of the issue events
// (the highest event id handled).
const (
	issuesCursorKey      = "events.github.issues"
	issueEventsCursorKey = "events.github.issue_events"
)

// pollIssues fires the issues and pull requests opened since the cursor, oldest first.
func (es *EventSource) pollIssues(ctx context.Context, rep *PollReport) error {
	cur, _, started, err := es.cursor(ctx, issuesCursorKey)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("repos/%s/%s/issues?state=all&sort=created&direction=desc&per_page=100", es.owner, es.name)
	fresh, first, top, err := pageNewer(ctx, es, rep, path, started, cur, func(it *github.Issue) int64 { return int64(it.GetNumber()) })
	if err != nil || !started {
		if err == nil && first != nil {
			err = es.start(ctx, rep, issuesCursorKey, strconv.FormatInt(top, 10))
		}
		return err
	}
	for _, it := range fresh {
		ev, err := es.issueEvent(ctx, it, int64(it.GetNumber()), "opened", it.GetUser().GetLogin())
		if err != nil {
			return err
		}
		if stop, err := es.handle(ctx, rep, ev, issuesCursorKey, strconv.Itoa(it.GetNumber())); err != nil || stop {
			es.forget(first)
			return err
		}
	}
	return nil
}

// pollIssueEvents fires the issue events since the cursor, oldest first.
func (es *EventSource) pollIssueEvents(ctx context.Context, rep *PollReport) error {
	cur, _, started, err := es.cursor(ctx, issueEventsCursorKey)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("repos/%s/%s/issues/events?per_page=100", es.owner, es.name)
	fresh, first, top, err := pageNewer(ctx, es, rep, path, started, cur, (*github.IssueEvent).GetID)
	if err != nil || !started {
		if err == nil && first != nil {
			err = es.start(ctx, rep, issueEventsCursorKey, strconv.FormatInt(top, 10))
		}
		return err
	}
	for _, e := range fresh {
		action := e.GetEvent()
		ev := ghEvent{ID: e.GetID(), Name: "issues", Action: action}
		if action != "opened" && slices.Contains(PolledActions, action) && e.Issue != nil {
			if ev, err = es.issueEvent(ctx, e.Issue, e.GetID(), action, e.GetActor().GetLogin()); err != nil {
				return err
			}
			ev.Label = e.GetLabel().GetName()
			ev.Created = e.GetCreatedAt().Time
		}
		// An activity the source does not fire still moves the cursor.
		if stop, err := es.handle(ctx, rep, ev, issueEventsCursorKey, strconv.FormatInt(e.GetID(), 10)); err != nil || stop {
			es.forget(first)
			return err
		}
	}
	return nil
}

// pageNewer reads the list at path (newest first) down to the cursor cur and returns the items
// above it, oldest first, the answer of its first page (a 304 returns no items) and the newest
// item's id (top, what a first poll starts from: then no item is returned). It reads maxPages at
// most: the items beyond are reported as never fired.
func pageNewer[T any](ctx context.Context, es *EventSource, rep *PollReport, path string, started bool, cur int64, id func(T) int64) (fresh []T, first *github.Response, top int64, err error) {
	for page := 1; page <= maxPages; page++ {
		var list []T
		resp, err := es.get(ctx, fmt.Sprintf("%s&page=%d", path, page), started && page == 1, &list)
		if err != nil {
			return nil, nil, 0, err
		}
		if page == 1 {
			if first = resp; resp.StatusCode == 304 {
				return nil, nil, 0, nil
			}
			if len(list) > 0 {
				top = id(list[0])
			}
			if !started {
				return nil, first, top, nil
			}
		}
		i := slices.IndexFunc(list, func(it T) bool { return id(it) <= cur })
		if i >= 0 || resp.NextPage == 0 {
			if i >= 0 {
				list = list[:i]
			}
			fresh = append(fresh, list...)
			slices.Reverse(fresh)
			return fresh, first, top, nil
		}
		fresh = append(fresh, list...)
	}
	slices.Reverse(fresh)
	rep.Ignored = append(rep.Ignored, fmt.Sprintf("more than %d new items at %s since the last poll: the older ones were passed over", maxPages*100, path))
	return fresh, first, top, nil
}

// issueEvent reads an issue or pull request's activity by sender as the event it fired on
// GitHub: issues, or pull_request for a pull request (whose head repository, for the same-repo
// gate, is asked of GitHub only when some actor declares a pull request event).
func (es *EventSource) issueEvent(ctx context.Context, it *github.Issue, id int64, action, sender string) (ghEvent, error) {
	ev := ghEvent{ID: id, Name: "issues", Action: action, Ref: strconv.Itoa(it.GetNumber()), Login: sender,
		Role: it.GetAuthorAssociation(), Body: it.GetBody(), Title: it.GetTitle(), Bot: strings.HasSuffix(sender, "[bot]")}
	if !it.IsPullRequest() {
		return ev, nil
	}
	ev.Name = "pull_request"
	if !es.declares("pull_request") && !es.declares("pull_request_target") {
		return ev, nil
	}
	var pr github.PullRequest
	if _, err := es.get(ctx, fmt.Sprintf("repos/%s/%s/pulls/%d", es.owner, es.name, it.GetNumber()), false, &pr); err != nil {
		return ev, err
	}
	ev.SameRepo = strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), es.Repo())
	ev.HeadRef, ev.HeadSHA, ev.Merged = pr.GetHead().GetRef(), pr.GetHead().GetSHA(), pr.GetMerged()
	return ev, nil
}
