package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/ghlimit"
	"github.com/autonomyhq/autonomy/internal/gitremote"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The local event source: for codeHost github, serve polls the repository for the events its
// actors declare and fires them as the generated workflows would (the same param resolution,
// the same trust gating: ghevent), each event exactly once across restarts: the cursor of what
// was seen is written in the store in the same transaction as the sessions the event launches.

// PolledEvents are the events the local event source polls GitHub for. An actor's trigger on
// another event never fires locally (docs/local.md).
var PolledEvents = []string{"issue_comment", "issues", "pull_request", "pull_request_target", "pull_request_review"}

// lowRemaining is the rate-limit budget under which the source stops polling until the reset:
// the rest is left to the runner's other calls and the operator's tools.
const lowRemaining = 50

// maxPages is the most pages of 100 one poll reads; the rest waits for the next poll.
const maxPages = 10

// EventOptions configure an event source.
type EventOptions struct {
	// Token reads the repository (GH_TOKEN or GITHUB_TOKEN of the runner's environment). It
	// never reaches a session.
	Token string
	// BaseURL is the API root ("" for https://api.github.com/; GITHUB_API_URL).
	BaseURL string
	// Repo is owner/name when policy.box.local.events.repo names none (GITHUB_REPOSITORY); ""
	// for the origin remote.
	Repo string
	// HTTPClient makes the requests (one with a one-minute timeout when nil).
	HTTPClient *http.Client
}

// EventSource polls one repository for its installation's event triggers.
type EventSource struct {
	r           *Runner
	client      *github.Client
	owner, name string
	// etags are the ETags of the last answers, by request URL, for conditional requests.
	etags map[string]string
	// waitUntil is when the next request may go out after a rate limit; next when serve polls
	// next.
	waitUntil, next time.Time
	// fresh and unchanged count the answers of this poll: 200s and 304s.
	fresh, unchanged int
	// openPulls are the open pull requests of the last answer to their list; multiPage the
	// review lists that took more than a page (events_reviews.go).
	openPulls []*github.PullRequest
	multiPage map[string]bool
	// settled are the records of the runner's writes settled when the read of each list began,
	// by its cursor key; read is set when that read came to the list's top, stopped when a
	// handling stopped it (events_applied.go).
	settled map[string][]string
	read    map[string]bool
	stopped bool
	// writer is the login of the token the runner writes with (GET /user, asked once; "" when
	// GitHub does not say, as for an app's token): only its events can be the runner's writes.
	writer      string
	writerAsked bool
	// skew is how far GitHub's clock is ahead of the runner's, in seconds, by its last answer.
	skew int64
}

// PollReport is what one poll did.
type PollReport struct {
	At time.Time
	// First is set on the first poll of an installation: the events before it never fire.
	First bool
	// NotModified is set when GitHub answered every request of the poll 304: nothing new.
	NotModified bool
	Fired       []store.Session
	// Ignored are events that fired nothing, and why (an untrusted author, a bot).
	Ignored []string
	// Deferred says why the poll stopped before an event (at capacity): it is retried.
	Deferred string
	// Backoff is set while a rate limit holds the source back: no request goes out before it.
	Backoff time.Time
}

// ghEvent is one event the source read, as the trust gate and the params see it.
type ghEvent struct {
	ID                     int64
	Name, Action           string
	Ref, Login, Role, Body string
	// Title is an issue's or pull request's; Label the label of a labeled or unlabeled event.
	Title, Label  string
	SameRepo, Bot bool
	Created       time.Time
	// HeadRef and HeadSHA are a pull request's head branch and commit (pull_request events
	// only; its head at the merge once merged), Merged whether it is merged.
	HeadRef, HeadSHA string
	Merged           bool
}

// NewEventSource opens the event source of r's installation.
func (r *Runner) NewEventSource(opts EventOptions) (*EventSource, error) {
	ev := r.In.Runner.Events
	if ev == nil || ev.CodeHost != "github" {
		return nil, errors.New("the installation polls no events: no actor declares an event trigger, or its codeHost is not github")
	}
	if opts.Token == "" {
		return nil, errors.New("no token to read GitHub with: set GH_TOKEN or GITHUB_TOKEN in the runner's environment (it never reaches a session)")
	}
	owner, name, err := r.githubRepo(ev.Repo, opts.Repo)
	if err != nil {
		return nil, err
	}
	c, err := githubClient(opts.Token, opts.BaseURL, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	return &EventSource{r: r, client: c, owner: owner, name: name, etags: map[string]string{}, multiPage: map[string]bool{},
		settled: map[string][]string{}, read: map[string]bool{}}, nil
}

// originRepo is owner/name of the origin remote of dir's repository when it is on github.com.
func originRepo(dir string) string {
	cmd := exec.Command("git", "remote", "get-url", "origin")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	repo, _ := gitremote.GitHubRepo(string(out))
	return repo
}

// Repo is the repository polled, owner/name.
func (es *EventSource) Repo() string { return es.owner + "/" + es.name }

// Unpolled lists, one line each, the event triggers of the installation that the source does not
// poll (or polls some activities of only), so serve can say so once.
func (es *EventSource) Unpolled() []string {
	var out []string
	for _, name := range es.r.In.Runner.Actors {
		cfg, err := es.r.In.Actor(name)
		if err != nil {
			continue
		}
		for _, t := range cfg.Triggers {
			if line := unpolled(cfg, t); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

// unpolled says what of t the source does not fire, or "".
func unpolled(cfg *ActorConfig, t Trigger) string {
	switch {
	case t.Kind != string(ir.Event):
		return ""
	case cfg.Kind == "human":
		return fmt.Sprintf("actor %s: a person's event trigger (%s) does not fire locally; launch the ask", cfg.Actor, t.Event)
	case !slices.Contains(PolledEvents, t.Event):
		return fmt.Sprintf("actor %s: event %s is not polled locally (polled: %s); it never fires here", cfg.Actor, t.Event, strings.Join(PolledEvents, ", "))
	}
	polled := polledActions(t.Event)
	var missing []string
	for _, a := range t.Types {
		if !slices.Contains(polled, a) {
			missing = append(missing, a)
		}
	}
	switch {
	case len(t.Types) == 0 && t.Event != "issue_comment":
		return fmt.Sprintf("actor %s: event %s fires locally on %s only", cfg.Actor, t.Event, strings.Join(polled, ", "))
	case len(missing) > 0:
		return fmt.Sprintf("actor %s: event %s: %s never fire locally (polled: %s)", cfg.Actor, t.Event, strings.Join(missing, ", "), strings.Join(polled, ", "))
	}
	return ""
}

// Poll reads what happened on the repository since the last poll and fires the actors whose
// triggers it matches. A rate limit is no error: the report's Backoff says until when the source
// waits.
func (es *EventSource) Poll(ctx context.Context) (PollReport, error) {
	if err := es.r.caller.operatorOnly(ctx, "serve"); err != nil {
		return PollReport{}, err
	}
	now := es.r.opts.Now()
	rep := PollReport{At: now.UTC()}
	if ev := es.r.In.Runner.Events; ev == nil || ev.CodeHost != "github" {
		return rep, nil // recompiled meanwhile without events on GitHub
	}
	if now.Before(es.waitUntil) {
		rep.Backoff = es.waitUntil
		return rep, nil
	}
	es.fresh, es.unchanged = 0, 0
	es.askWriter(ctx)
	var err error
	if es.declares("issue_comment") {
		err = es.readList(commentCursorKey, func() error { return es.pollComments(ctx, &rep) })
	}
	if err == nil && (es.declares("issues") || es.declares("pull_request") || es.declares("pull_request_target")) {
		if err = es.readList(issuesCursorKey, func() error { return es.pollIssues(ctx, &rep) }); err == nil {
			err = es.readList(issueEventsCursorKey, func() error { return es.pollIssueEvents(ctx, &rep) })
		}
	}
	if err == nil && (es.declares("pull_request") || es.declares("pull_request_target") || es.declares("pull_request_review")) {
		err = es.pollHeads(ctx, &rep)
	}
	rep.NotModified = es.unchanged > 0 && es.fresh == 0
	if wait, kind, limited := ghlimit.Wait(err, now); limited {
		es.waitUntil = now.Add(wait)
		rep.Backoff = es.waitUntil
		msg := fmt.Sprintf("GitHub's %s rate limit: polling again after %s", kind, es.waitUntil.UTC().Format(time.RFC3339))
		if wait >= ghlimit.MaxWait {
			msg += fmt.Sprintf(" (GitHub named a longer wait; autonomy waits at most %s, then asks again)", ghlimit.MaxWait)
		}
		rep.Ignored = append(rep.Ignored, msg)
		return rep, nil
	}
	return rep, err
}

// askWriter learns, once, the login of the token the runner writes with: the user GitHub answers
// GET /user with. A token that is no user's (an app's) or an answer that fails leaves it
// unknown, and then any author's event may be taken for a write of the runner's, by its content.
func (es *EventSource) askWriter(ctx context.Context) {
	if es.writerAsked {
		return
	}
	var u github.User
	resp, err := es.get(ctx, "user", false, &u)
	switch {
	case err == nil:
		es.writer, es.writerAsked = u.GetLogin(), true
	case resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500:
		es.writerAsked = true // no user's token: asked again, it answers the same
	}
}

// readList runs poll, the read of the list whose cursor is key, and notes whether it came to the
// list's top: no error, no event deferred.
func (es *EventSource) readList(key string, poll func() error) error {
	es.stopped = false
	err := poll()
	es.read[key] = err == nil && !es.stopped
	if err != nil {
		// A read that failed partway kept the ETags of the pages it did read: a 304 on them
		// next time would pass over the pages after, unread (and count as a complete read).
		clear(es.etags)
	}
	return err
}

// declares reports whether some installed actor has a trigger on event.
func (es *EventSource) declares(event string) bool { return declaresEvent(es.r.In, event) }

// declaresEvent reports whether an actor of in declares an event trigger on event.
func declaresEvent(in *Install, event string) bool {
	for _, name := range in.Runner.Actors {
		if cfg, err := in.Actor(name); err == nil && slices.ContainsFunc(cfg.Triggers, func(t Trigger) bool { return t.Kind == string(ir.Event) && t.Event == event }) {
			return true
		}
	}
	return false
}

// pollsWrites reports whether the event source polls the events a write of kind makes (Poll):
// comments for issue_comment, issues and labels for issues and pull requests.
func pollsWrites(in *Install, kind string) bool {
	if kind == "comment" {
		return declaresEvent(in, "issue_comment")
	}
	return declaresEvent(in, "issues") || declaresEvent(in, "pull_request") || declaresEvent(in, "pull_request_target")
}

// start sets the cursor key to value, unless another serve set it meanwhile: the first poll.
func (es *EventSource) start(ctx context.Context, rep *PollReport, key, value string) error {
	rep.First = true
	return es.r.Store.Tx(ctx, func(tx *store.Tx) error {
		if _, ok, err := tx.Meta(key); err != nil || ok {
			return err
		}
		return tx.SetMeta(key, value)
	})
}

// cursor reads the cursor key: the id of the newest event handled, and its time when it has one.
// Before a read of a list of the runner's writes' events, it prunes their records in the same
// transaction (pruneApplied).
func (es *EventSource) cursor(ctx context.Context, key string) (int64, time.Time, bool, error) {
	var raw string
	var ok bool
	err := es.r.Store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if raw, ok, err = tx.Meta(key); err != nil || !isWriteList(key) {
			return err
		}
		var spent []string
		if es.read[key] {
			spent = es.settled[key]
		}
		settled, err := pruneApplied(tx, key, spent, es.r.opts.Now())
		es.settled[key], es.read[key] = settled, false
		return err
	})
	if err != nil || !ok {
		return 0, time.Time{}, false, err
	}
	return parseCursor(raw)
}

func parseCursor(raw string) (int64, time.Time, bool, error) {
	idText, at, _ := strings.Cut(raw, " ")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("the store's event cursor %q is not an id: %v", raw, err)
	}
	var since time.Time
	if at != "" {
		if since, err = time.Parse(time.RFC3339, at); err != nil {
			return 0, time.Time{}, false, fmt.Errorf("the store's event cursor %q holds no time: %v", raw, err)
		}
	}
	return id, since, true, nil
}

// get makes one GET request of path into v, conditional on the ETag of its last answer when
// cond is set. A 304 is returned as a response without error, v untouched.
func (es *EventSource) get(ctx context.Context, path string, cond bool, v any) (*github.Response, error) {
	req, err := es.client.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	key := req.URL.String()
	if tag := es.etags[key]; cond && tag != "" {
		req.Header.Set("If-None-Match", tag)
	}
	resp, err := es.client.Do(ctx, req, v)
	if resp != nil && resp.StatusCode == http.StatusNotModified {
		es.unchanged++
		return resp, nil
	}
	if err != nil {
		return resp, err
	}
	es.fresh++
	es.clockSkew(resp.Header.Get("Date"))
	if tag := resp.Header.Get("ETag"); tag != "" {
		es.etags[key] = tag
	}
	if resp.Rate.Limit > 0 && resp.Rate.Remaining < lowRemaining && resp.Rate.Reset.After(es.r.opts.Now()) {
		es.waitUntil = resp.Rate.Reset.Add(ghlimit.ResetBuffer)
	}
	return resp, nil
}

// clockSkew notes how far GitHub's clock is ahead of the runner's (es.skew, in seconds; behind
// when negative) from an answer's Date header: the rule that an event GitHub made well after a
// write was settled is not the write's compares GitHub's time with the runner's. The header's
// one-second resolution and the answer's transit are small beside appliedGrace.
func (es *EventSource) clockSkew(date string) {
	if t, err := http.ParseTime(date); err == nil {
		es.skew = t.Unix() - es.r.opts.Now().Unix()
	}
}

// forget drops the ETag of resp's request: what it answered must be read again.
func (es *EventSource) forget(resp *github.Response) {
	if resp != nil && resp.Request != nil {
		delete(es.etags, resp.Request.URL.String())
	}
}

// handle fires the actors ev triggers and moves the cursor key past it (to value, whose first
// field is ev's id), in one transaction, then starts the sessions. stop is set when it could not
// fire now (at capacity): the cursor stays.
func (es *EventSource) handle(ctx context.Context, rep *PollReport, ev ghEvent, key, value string) (stop bool, err error) {
	return es.handleIf(ctx, rep, ev, key, value, func(raw string) bool {
		cur, _, _, err := parseCursor(raw)
		return err == nil && ev.ID <= cur
	})
}

// handleIf is handle with the test of whether the stored value raw of key says ev was handled.
func (es *EventSource) handleIf(ctx context.Context, rep *PollReport, ev ghEvent, key, value string, seen func(raw string) bool) (stop bool, err error) {
	defer func() { es.stopped = es.stopped || stop }()
	r := es.r
	firings, why := es.firings(ev)
	if err := r.preflightFirings(firings); err != nil {
		return true, err
	}
	var fired []store.Session
	var refused string
	err = r.Store.Tx(ctx, func(tx *store.Tx) error {
		fired, refused = nil, ""
		raw, ok, err := tx.Meta(key)
		if err != nil {
			return err
		}
		if ok && seen(raw) {
			return nil // another serve fired it
		}
		where := "on #" + ev.Ref + " of " + es.Repo()
		skip, err := skipApplied(tx, rep, ev, where, es.writer, es.skew)
		if err == nil && !skip {
			skip, err = skipProposalPush(tx, rep, ev, where, es.writer, es.r.opts.Now())
		}
		if err == nil && !skip {
			skip, err = skipProposalMerge(tx, rep, ev, where, es.writer)
		}
		if err != nil || skip {
			if skip {
				err = tx.SetMeta(key, value)
			}
			return err
		}
		if paused, err := heldFirings(tx, firings, ev, where); err != nil || paused != "" {
			if paused != "" {
				rep.Ignored = append(rep.Ignored, fmt.Sprintf("%s %s %d by %s on #%s: %s", ev.Name, ev.Action, ev.ID, ev.Login, ev.Ref, paused))
				err = tx.SetMeta(key, value)
			}
			return err
		}
		if fired, refused, err = r.recordFirings(tx, firings, ev, where); err != nil || refused != "" {
			return err
		}
		if len(firings) == 0 && why != "" {
			rep.Ignored = append(rep.Ignored, fmt.Sprintf("%s %s %d by %s on #%s: %s", ev.Name, ev.Action, ev.ID, ev.Login, ev.Ref, why))
		}
		return tx.SetMeta(key, value)
	})
	if err != nil || refused != "" {
		if refused != "" {
			rep.Deferred = fmt.Sprintf("%s of %s on #%s: %s", ev.Name, ev.Login, ev.Ref, refused)
		}
		return true, err
	}
	started, err := r.startFired(ctx, fired)
	rep.Fired = append(rep.Fired, started...)
	return err != nil, err
}

// PrintPoll writes a poll's report, one line per firing, ignored event and deferral, with the
// control characters of what GitHub sent escaped.
func PrintPoll(w io.Writer, rep PollReport) {
	at := rep.At.Format(time.RFC3339)
	if rep.First {
		fmt.Fprintf(w, "%s first poll: events from now on fire\n", at)
	}
	for _, s := range rep.Fired {
		fmt.Fprintf(w, "%s fired %s on %s #%s: session %s\n", at, s.Actor, s.Trigger, cliout.TerminalSafe(s.Ref), s.ID)
	}
	for _, why := range rep.Ignored {
		fmt.Fprintf(w, "%s ignored %s\n", at, cliout.TerminalSafe(why))
	}
	if rep.Deferred != "" {
		fmt.Fprintf(w, "%s deferred %s (retried at the next poll)\n", at, cliout.TerminalSafe(rep.Deferred))
	}
}

// WatchEvents has Serve poll es every policy.box.local.events.poll_seconds.
func (r *Runner) WatchEvents(es *EventSource) { r.events = es }

// serve polls when a poll is due, reports it on w, and returns the earlier of wake and the next
// poll.
func (es *EventSource) serve(ctx context.Context, w io.Writer, wake time.Time) time.Time {
	now := es.r.opts.Now()
	if !now.Before(es.next) {
		rep, err := es.Poll(ctx)
		if err != nil {
			fmt.Fprintf(w, "autonomy: polling %s failed: %v\n", es.Repo(), err)
		} else {
			PrintPoll(w, rep)
		}
		every := defaultPollSeconds
		if ev := es.r.In.Runner.Events; ev != nil && ev.PollSeconds > 0 {
			every = ev.PollSeconds
		}
		es.next = now.Add(time.Duration(every) * time.Second)
		if rep.Backoff.After(es.next) {
			es.next = rep.Backoff
		}
	}
	if es.next.Before(wake) {
		return es.next
	}
	return wake
}

// maxAnswer is the most one answer of GitHub may hold: a page of 100 items is far less.
const maxAnswer = 32 << 20

// cappedTransport fails the read of an answer longer than max, so that no answer, however
// long, is held in memory whole.
type cappedTransport struct {
	base http.RoundTripper
	max  int64
}

func (c cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: c.max}
	}
	return resp, err
}

// cappedBody is an answer's body that errs past its cap.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("GitHub's answer is longer than %d bytes: not read", maxAnswer)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
