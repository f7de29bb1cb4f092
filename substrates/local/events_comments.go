package local

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// commentCursorKey is the store's meta key of the issue comments seen: "<id> <created>", the
// newest comment handled and when it was created.
const commentCursorKey = "events.github.issue_comment"

// pollComments fires the issue comments created since the cursor, oldest first. It reads the
// list newest first (sort=created, direction=desc) down to the cursor, as pageNewer does: since
// filters on updated_at, so old comments edited since the cursor are listed too, and read oldest
// first they could fill every page a poll reads before the new ones; newest first they come
// after the cursor and are never read. A poll that reaches maxPages says so in rep.Ignored.
func (es *EventSource) pollComments(ctx context.Context, rep *PollReport) error {
	curID, since, ok, err := es.cursor(ctx, commentCursorKey)
	if err != nil {
		return err
	}
	if !ok {
		return es.startComments(ctx, rep)
	}
	q := url.Values{"sort": {"created"}, "direction": {"desc"}, "per_page": {"100"}}
	if !since.IsZero() {
		// Only comments updated since a second before the cursor's can be new (whether GitHub's
		// "after" is strict or not); those handled are passed over by id.
		q.Set("since", since.Add(-time.Second).UTC().Format(time.RFC3339))
	}
	path := "repos/" + es.owner + "/" + es.name + "/issues/comments?" + q.Encode()
	fresh, first, _, err := pageNewer(ctx, es, rep, path, true, curID, (*github.IssueComment).GetID)
	if err != nil || first == nil {
		return err
	}
	// Ids grow with creation: handled in their order, none of one second is passed over.
	slices.SortFunc(fresh, func(a, b *github.IssueComment) int { return cmp.Compare(a.GetID(), b.GetID()) })
	for _, c := range fresh {
		if c.GetID() <= curID {
			continue
		}
		ev := commentEvent(c)
		stop, err := es.handle(ctx, rep, ev, commentCursorKey, fmt.Sprintf("%d %s", ev.ID, ev.Created.UTC().Format(time.RFC3339)))
		if err != nil || stop {
			es.forget(first) // what is left must be read again
			return err
		}
	}
	return nil
}

// startComments sets the cursor at the newest comment on the first poll: the comments made
// before the source started never fire.
func (es *EventSource) startComments(ctx context.Context, rep *PollReport) error {
	var list []*github.IssueComment
	if _, err := es.get(ctx, "repos/"+es.owner+"/"+es.name+"/issues/comments?sort=created&direction=desc&per_page=1", false, &list); err != nil {
		return err
	}
	value := "0 "
	if len(list) > 0 {
		value = fmt.Sprintf("%d %s", list[0].GetID(), list[0].GetCreatedAt().UTC().Format(time.RFC3339))
	}
	return es.start(ctx, rep, commentCursorKey, value)
}

// commentEvent reads an issue comment as the issue_comment event it fired on GitHub.
func commentEvent(c *github.IssueComment) ghEvent {
	ref := c.GetIssueURL()
	ref = ref[strings.LastIndex(ref, "/")+1:]
	if _, err := strconv.Atoi(ref); err != nil {
		ref = "" // not an issue's API URL: no subject
	}
	login := c.GetUser().GetLogin()
	return ghEvent{ID: c.GetID(), Name: "issue_comment", Action: "created", Ref: ref, Login: login,
		Role: c.GetAuthorAssociation(), Body: c.GetBody(), Created: c.GetCreatedAt().Time,
		Bot: c.GetUser().GetType() == "Bot" || strings.HasSuffix(login, "[bot]")}
}
