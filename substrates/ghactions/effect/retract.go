package effect

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The runner's verbs on an ask (runner cancel and runner update on gh-actions), the
// counterparts of the local runner's. A retraction closes an open ask with no resolution: the
// bot records
//
//	<!-- autonomy:retraction token=TOKEN by=ACTOR -->
//
// on its item, and Asks reads the ask as resolved "retracted" (its session is cancelled). An
// agent's own comments (the apply job's comment effect) may not start with a marker, so only the
// runner's verb writes one. A resolution with evidence is a maintainer's command that the
// control workflow would have recorded: the evidence names that comment, and Resolve checks it
// as it checks every resolution.

// Retracted is the Resolved of a retracted ask.
const Retracted = "retracted"

var retractionRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^<!-- autonomy:retraction token=([0-9a-f]{32}) by=(\S+) -->`)
})

// FindOpenAsk returns the open ask a runner session id names: "ask:TOKEN", or the run id of the
// human actor's run that posted it; nil when none is open.
func FindOpenAsk(ctx context.Context, e *Env, id string) (*Ask, error) {
	asks, err := OpenAsks(ctx, e)
	if err != nil {
		return nil, err
	}
	token, byToken := strings.CutPrefix(id, "ask:")
	for _, a := range asks {
		if byToken && a.Token == token || !byToken && a.RunID != "" && a.RunID == id {
			return a, nil
		}
	}
	return nil, nil
}

// Retract records that by (the calling actor, or "operator") withdrew the open ask a.
func Retract(ctx context.Context, e *Env, a *Ask, by string) error {
	body := fmt.Sprintf("<!-- autonomy:retraction token=%s by=%s -->\nThe ask of %s above is withdrawn by %s: its token resolves nothing now.\n", a.Token, by, a.Actor, by)
	if err := e.comment(ctx, a.Item, body); err != nil {
		return err
	}
	a.Resolved = Retracted
	return nil
}

// ResolveWithEvidence resolves the open ask a as the maintainer's command that evidence names
// (its comment's URL, or its id) records: token must be a's, the command must say it, and status
// ("done" or "failed", "" for either) must fit the command's verb (done: approve or answer;
// failed: reject). Resolve then checks the rest (a maintainer's, after the ask, never edited).
func ResolveWithEvidence(ctx context.Context, e *Env, a *Ask, token, evidence, status string) (*Ask, error) {
	if token != a.Token {
		return nil, &Refused{"the token is not this ask's: nothing changes (quote the token the ask was posted with)"}
	}
	id, err := commentID(evidence)
	if err != nil {
		return nil, &Refused{err.Error()}
	}
	c, _, err := e.Client.Issues.GetComment(ctx, e.Owner, e.Repo, id)
	if err != nil {
		return nil, fmt.Errorf("reading comment %d: %w", id, err)
	}
	verb, note := "", ""
	for _, v := range []string{"approve", "reject", "answer"} {
		if n, ok := CommandNote(c.GetBody(), v, token); ok {
			verb, note = v, n
		}
	}
	switch {
	case verb == "":
		return nil, &Refused{fmt.Sprintf("comment %d is not a command resolving this ask (/agent approve|reject|answer %s)", id, token)}
	case status == "done" && verb == "reject", status == "failed" && verb != "reject":
		return nil, &Refused{fmt.Sprintf("comment %d says %s, which does not make the ask %s", id, verb, status)}
	}
	item := 0
	if u := c.GetIssueURL(); u != "" {
		item, _ = strconv.Atoi(u[strings.LastIndex(u, "/")+1:])
	}
	if item != a.Item {
		return nil, &Refused{fmt.Sprintf("comment %d is not on #%d, the ask's item", id, a.Item)}
	}
	return Resolve(ctx, e, Resolution{Item: a.Item, By: c.GetUser().GetLogin(), Verb: verb, Token: token, Note: note,
		CommentURL: c.GetHTMLURL(), CommentID: id})
}

// commentID reads a comment's id from its URL (…#issuecomment-ID) or the id itself.
func commentID(evidence string) (int64, error) {
	s := strings.TrimSpace(evidence)
	if u, err := url.Parse(s); err == nil && u.Fragment != "" {
		s, _ = strings.CutPrefix(u.Fragment, "issuecomment-")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("evidence %q: name the maintainer's command, by its URL (https://github.com/OWNER/REPO/issues/N#issuecomment-ID) or its comment id", evidence)
	}
	return n, nil
}
