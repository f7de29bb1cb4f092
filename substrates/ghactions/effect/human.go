package effect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/substrates/ghactions/maintainers"
)

// The human seam on GitHub. A human session is an ask: a comment the bot posts on the work item,
// whose first line is a hidden marker
//
//	<!-- autonomy:ask actor=NAME token=TOKEN at=RFC3339 run=RUNID -->
//
// It stays open (the session is running) until the bot records a resolution of that token
//
//	<!-- autonomy:resolution token=TOKEN verb=VERB by=LOGIN -->
//
// after verifying the command (a maintainer's /agent approve|reject|answer TOKEN on that item).
// Each escalation of the sweep is a bot comment too:
//
//	<!-- autonomy:escalation token=TOKEN n=N at=RFC3339 to=LOGIN -->
//
// The ask of a step playbook's @elicit (elicit.go) carries the elicitation's kind, and a select's
// options (base64url JSON), after run=; the resume of its run is recorded, for people (the
// guard is the run's artifact, deleted once the pause is spent: elicit.go):
//
//	<!-- autonomy:resumed token=TOKEN run=RUNID -->
//
// Only comments by the bot count, so nobody can forge an ask, a resolution or an escalation; and
// nothing here is ever marked done by a timer.

// BotLogin is the author of every comment the workflows' token writes.
const BotLogin = "github-actions[bot]"

var (
	askRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<!-- autonomy:ask actor=([A-Za-z0-9._-]+) token=([0-9a-f]{32}) at=(\S+) run=(\S*)(?: elicit=(input|confirm|select)(?: options=([A-Za-z0-9_-]*))?)?(?: head=([0-9a-f]{40}|[0-9a-f]{64}))?(?: type=(approve|decide|consult|inform)(?: choices=([A-Za-z0-9_-]*))?)? -->`)
	})
	resolutionRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<!-- autonomy:resolution token=([0-9a-f]{32}) verb=([a-z]+) by=(\S+) comment=([0-9]+) -->`)
	})
	escalationRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<!-- autonomy:escalation token=([0-9a-f]{32}) n=([0-9]+) at=(\S+) to=(\S+) -->`)
	})
)

// Ask is one engagement of a human actor on a work item.
type Ask struct {
	Actor, Token string
	Item         int
	At           time.Time
	// RunID is the run that posted it ("" when posted by a propose job's engage).
	RunID string
	// Resolved is the verb of its resolution ("" while open); Escalations how many were sent,
	// LastAt when the last notification (the ask or an escalation) went out.
	Resolved    string
	Escalations int
	LastAt      time.Time
	// Elicit is a step playbook's elicitation the ask carries ("" for any other ask): its kind
	// and a select's options.
	Elicit *Elicitation
	// Head is the pull request head a human-required ask is bound to ("" for any other ask):
	// its approval is the human gate's success on that commit only (humangate.go).
	Head string
	// Typed is the type and options of a typed ask (ask_person's; nil for any other): its
	// resolution must fit them (typed.go).
	Typed *handoff.Spec
	// Answer is the text of the maintainer's command that resolved it, after the token (the
	// command's own comment, verified as the resolution is).
	Answer string
	// Posted is when the ask's comment was created, CommentID its id; askNode and answerNode are
	// the GraphQL node ids of the ask's comment and of the maintainer's command that resolved
	// it (the resume of a playbook asks GitHub whether either was edited: any job's token can
	// edit them).
	Posted              time.Time
	CommentID           int64
	askNode, answerNode string
	// answerID is the maintainer's command that resolved it.
	answerID int64
}

// HumanPolicy is policy.box.human.
type HumanPolicy struct {
	MaintainersVar string `json:"maintainers_var"`
	SLAMinutes     int    `json:"sla_minutes"`
}

// now is the clock of the trusted jobs: AUTONOMY_NOW (RFC 3339) when set, for tests; else time.Now.
func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Maintainers resolves who the installation engages: policy.box.human.maintainers_var's
// variable, falling back to the repository's admins.
func Maintainers(ctx context.Context, e *Env) (*maintainers.List, error) {
	return maintainers.Resolve(ctx, e.Client, e.Owner, e.Repo, e.Policy.Box.Human.MaintainersVar)
}

// Engage posts the ask of actor on work item n: the situation (ask) and the task spec, the
// token a resolution must quote, an @-mention of the maintainers, whom it also assigns; and it
// applies the tracker label of input-required. It returns the ask.
func Engage(ctx context.Context, e *Env, actor string, n int, ask, spec string) (*Ask, error) {
	if err := e.refusePaused(ctx, n); err != nil {
		return nil, err
	}
	return engage(ctx, e, actor, n, ask, spec, nil, "", nil)
}

func engage(ctx context.Context, e *Env, actor string, n int, ask, spec string, el *Elicitation, head string, typed *handoff.Spec) (*Ask, error) {
	if !safeSubject().MatchString(actor) {
		return nil, fmt.Errorf("actor %q must be a name (letters, digits, . _ -)", actor)
	}
	ms, err := Maintainers(ctx, e)
	if err != nil {
		return nil, err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	a := &Ask{Actor: actor, Token: hex.EncodeToString(raw[:]), Item: n, At: e.now().UTC(), RunID: e.RunID, Elicit: el, Head: head, Typed: typed}
	bound := ""
	if head != "" {
		bound = " head=" + head
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- autonomy:ask actor=%s token=%s at=%s run=%s%s%s%s -->\n", a.Actor, a.Token, a.At.Format(time.RFC3339), a.RunID, el.marker(), bound, typedMarker(typed))
	fmt.Fprintf(&b, "### Input required from %s\n\n", actor)
	// The ask is a launch's param or a playbook's prompt: no HTML comment in it may hide part of
	// what the maintainer resolves, nor read as a marker.
	if ask = strings.TrimSpace(tools.Neutralize(ask)); ask != "" {
		b.WriteString(ask + "\n\n")
	}
	if spec = strings.TrimSpace(spec); spec != "" {
		b.WriteString(spec + "\n\n")
	}
	fmt.Fprintf(&b, "%s: a maintainer resolves this ask with one of\n\n", mentions(ms.Logins))
	for _, v := range commands(el, typed) {
		verb, rest, _ := strings.Cut(v, " ")
		fmt.Fprintf(&b, "    /agent %s %s\n", verb, strings.TrimSpace(a.Token+" "+rest))
	}
	b.WriteString(el.help())
	b.WriteString(typedHelp(typed))
	if e.RunURL != "" {
		fmt.Fprintf(&b, "\n(%s)\n", e.RunURL)
	}
	id, err := e.postComment(ctx, n, b.String())
	if err != nil {
		return nil, fmt.Errorf("posting the ask on #%d: %w", n, err)
	}
	a.CommentID = id
	if _, _, err := e.Client.Issues.AddAssignees(ctx, e.Owner, e.Repo, n, ms.Logins); err != nil {
		return nil, fmt.Errorf("assigning the maintainers to #%d: %w", n, err)
	}
	if typed == nil || typed.Type != handoff.Inform { // an inform is no work: nothing waits on it
		if _, _, err := e.Client.Issues.AddLabelsToIssue(ctx, e.Owner, e.Repo, n, []string{e.Policy.label("input-required")}); err != nil {
			return nil, fmt.Errorf("labelling #%d: %w", n, err)
		}
	}
	fmt.Fprintf(e.Out, "engaged %s on #%d (maintainers: %s, from the %s)\n", actor, n, strings.Join(ms.Logins, ", "), ms.Source)
	return a, nil
}

func mentions(logins []string) string {
	out := make([]string, len(logins))
	for i, l := range logins {
		out[i] = "@" + l
	}
	return strings.Join(out, " ")
}

// Asks reads the asks on work item n from the bot's comments, oldest first, with their
// resolutions and escalations.
func Asks(ctx context.Context, e *Env, n int) ([]*Ask, error) {
	var asks []*Ask
	byToken := map[string]*Ask{}
	var all []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := e.Client.Issues.ListComments(ctx, e.Owner, e.Repo, n, opts)
		if err != nil {
			return nil, fmt.Errorf("reading the comments of #%d: %w", n, err)
		}
		all = append(all, cs...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	byID := make(map[int64]*github.IssueComment, len(all))
	for _, c := range all {
		byID[c.GetID()] = c
	}
	// Every job's token posts as the bot, an agent's too: a resolution counts only when the
	// maintainer's own command it names is on this item and says the same (commanded).
	var ms *maintainers.List
	commanded := func(m []string) (note, node string, ok bool, err error) {
		id, _ := strconv.ParseInt(m[4], 10, 64)
		c := byID[id]
		if c == nil || c.GetUser().GetLogin() == BotLogin || !strings.EqualFold(c.GetUser().GetLogin(), m[3]) {
			return "", "", false, nil
		}
		if note, ok = CommandNote(c.GetBody(), m[2], m[1]); !ok {
			return "", "", false, nil
		}
		if ms == nil {
			if ms, err = Maintainers(ctx, e); err != nil {
				return "", "", false, err
			}
		}
		return note, c.GetNodeID(), ms.Has(m[3]), nil
	}
	for _, c := range all {
		if c.GetUser().GetLogin() != BotLogin {
			continue
		}
		first, _, _ := strings.Cut(c.GetBody(), "\n")
		if m := askRe().FindStringSubmatch(first); m != nil {
			at, err := time.Parse(time.RFC3339, m[3])
			if err != nil {
				continue
			}
			a := &Ask{Actor: m[1], Token: m[2], At: at, LastAt: at, RunID: m[4], Item: n, Elicit: parseElicitation(m[5], m[6]), Head: m[7], Typed: parseTyped(m[8], m[9]),
				Posted: c.GetCreatedAt().Time, CommentID: c.GetID(), askNode: c.GetNodeID()}
			if byToken[a.Token] != nil {
				continue // a copy of an ask: its token resolves the first one only
			}
			asks = append(asks, a)
			byToken[a.Token] = a
		} else if m := resolutionRe().FindStringSubmatch(first); m != nil {
			if a := byToken[m[1]]; a != nil && a.Resolved == "" {
				note, node, ok, err := commanded(m)
				if err != nil {
					return nil, err
				}
				if ok {
					a.Resolved, a.Answer, a.answerNode = m[2], note, node
					a.answerID, _ = strconv.ParseInt(m[4], 10, 64)
				}
			}
		} else if m := retractionRe().FindStringSubmatch(first); m != nil {
			if a := byToken[m[1]]; a != nil && a.Resolved == "" {
				a.Resolved = Retracted // retract.go
			}
		} else if m := escalationRe().FindStringSubmatch(first); m != nil {
			if a := byToken[m[1]]; a != nil {
				k, _ := strconv.Atoi(m[2])
				a.Escalations = max(a.Escalations, k)
				if at, err := time.Parse(time.RFC3339, m[3]); err == nil && at.After(a.LastAt) {
					a.LastAt = at
				}
			}
		}
	}
	return asks, nil
}

// Resolution is a maintainer's command on a work item.
type Resolution struct {
	Item        int
	By          string
	Verb, Token string
	Note        string
	CommentURL  string
	// CommentID is the command's own comment: the resolution names it, and Asks counts the
	// resolution only while that comment is the maintainer's and says the same.
	CommentID int64
}

// Resolve records a resolution, after checking it: the verb is approve, reject (with a reason)
// or answer (with text); the author is a maintainer; the token is that of an open ask on that
// same item, or of one this very command resolved already (a re-run, or a copy of the
// resolution another job posted first: nothing more is recorded); the command, read back from
// GitHub (verifyCommand), is the maintainer's, came after the ask, and neither was edited. An ask
// bound to a head has its human gate posted before the resolution is recorded (resolveGate). A
// refusal is a *Refused saying why; nothing is then recorded.
func Resolve(ctx context.Context, e *Env, r Resolution) (*Ask, error) {
	switch r.Verb {
	case "approve", "confirm":
	case "reject", "answer":
		if strings.TrimSpace(r.Note) == "" {
			return nil, &Refused{fmt.Sprintf("/agent %s needs text after the token: /agent %s TOKEN <%s>", r.Verb, r.Verb, map[string]string{"reject": "reason", "answer": "text"}[r.Verb])}
		}
	default:
		return nil, &Refused{fmt.Sprintf("unknown verb %q: use /agent approve|reject|answer|confirm TOKEN", r.Verb)}
	}
	ms, err := Maintainers(ctx, e)
	if err != nil {
		return nil, err
	}
	if !ms.Has(r.By) {
		return nil, &Refused{fmt.Sprintf("@%s is not a maintainer (the %s lists %s); only a maintainer resolves an ask", r.By, sourceName(ms), strings.Join(ms.Logins, ", "))}
	}
	if r.Token == "" {
		return nil, &Refused{"no token: quote the ask's token, /agent " + r.Verb + " TOKEN"}
	}
	if r.CommentID == 0 {
		return nil, &Refused{"the command's comment is unknown (AUTONOMY_COMMENT_ID): a resolution must name the maintainer's own comment"}
	}
	asks, err := Asks(ctx, e, r.Item)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(asks, func(a *Ask) bool { return a.Token == r.Token })
	switch {
	case i < 0:
		return nil, &Refused{fmt.Sprintf("no ask on #%d has the token %s (a token resolves the ask it was posted with, on that item only)", r.Item, r.Token)}
	case asks[i].Resolved != "" && (asks[i].answerID != r.CommentID || asks[i].Resolved != r.Verb):
		return nil, &Refused{fmt.Sprintf("the ask of %s with token %s is already resolved (%s)", asks[i].Actor, r.Token, asks[i].Resolved)}
	}
	a := asks[i]
	// Resolved by this very command already (a re-run, or a copy of the resolution another job
	// posted first): the gate is posted again, and nothing more is recorded.
	again := a.Resolved != ""
	if r.Note, err = e.verifyCommand(ctx, a, r); err != nil {
		return nil, err
	}
	if err := a.Elicit.fits(r.Verb, r.Note); err != nil {
		return nil, &Refused{err.Error()}
	}
	if err := typedFits(a.Typed, r.Verb, r.Note); err != nil {
		return nil, &Refused{err.Error()}
	}
	// The gate first: a resolution recorded but not posted would spend the token for nothing.
	if err := e.resolveGate(ctx, a, r.Verb, r.By); err != nil {
		return nil, err
	}
	if again {
		return a, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- autonomy:resolution token=%s verb=%s by=%s comment=%d -->\n", a.Token, r.Verb, r.By, r.CommentID)
	fmt.Fprintf(&b, "Recorded for %s: **%s** by @%s", a.Actor, r.Verb, r.By)
	if r.CommentURL != "" {
		fmt.Fprintf(&b, " (%s)", r.CommentURL)
	}
	b.WriteString(".\n")
	if note := strings.TrimSpace(r.Note); note != "" {
		b.WriteString("\n> " + strings.ReplaceAll(note, "\n", "\n> ") + "\n")
	}
	if err := e.comment(ctx, r.Item, b.String()); err != nil {
		return nil, err
	}
	a.Resolved = r.Verb
	return a, nil
}

// verifyCommand reads the maintainer's command from GitHub, not from the event that carried it
// (a re-run of the control workflow replays an old event), and returns its text after the
// token: the comment r.CommentID is on the ask's item, written by r.By, says this verb and
// token, was posted after the ask, and neither it nor the ask was ever edited (any job's token
// can edit a comment: an ask edited to name another head or actor is not the one the maintainer
// answered).
func (e *Env) verifyCommand(ctx context.Context, a *Ask, r Resolution) (string, error) {
	c, _, err := e.Client.Issues.GetComment(ctx, e.Owner, e.Repo, r.CommentID)
	if err != nil {
		return "", fmt.Errorf("reading the command's comment %d: %w", r.CommentID, err)
	}
	login := c.GetUser().GetLogin()
	note, says := CommandNote(c.GetBody(), r.Verb, r.Token)
	switch {
	case !strings.HasSuffix(c.GetIssueURL(), "/issues/"+strconv.Itoa(r.Item)):
		return "", &Refused{fmt.Sprintf("the command's comment %d is not on #%d", r.CommentID, r.Item)}
	case login == BotLogin || !strings.EqualFold(login, r.By):
		return "", &Refused{fmt.Sprintf("the command's comment %d is not @%s's", r.CommentID, r.By)}
	case !says:
		return "", &Refused{fmt.Sprintf("the comment %d does not say /agent %s %s", r.CommentID, r.Verb, r.Token)}
	case c.GetID() <= a.CommentID:
		return "", &Refused{fmt.Sprintf("the command was given before the ask %s was posted: it does not answer it", a.Token)}
	}
	edited, err := lastEdited(ctx, e, a.askNode, c.GetNodeID())
	if err != nil {
		return "", err
	}
	switch {
	case edited[a.askNode]:
		return "", &Refused{fmt.Sprintf("the ask %s on #%d was edited after it was posted: it is not trusted; a new one is needed", a.Token, r.Item)}
	case edited[c.GetNodeID()]:
		return "", &Refused{fmt.Sprintf("the command (comment %d) was edited after it was given: post it again, unedited", r.CommentID)}
	}
	return note, nil
}

func sourceName(ms *maintainers.List) string {
	if ms.Source == maintainers.FromVariable {
		return "repository variable " + ms.Var
	}
	return "repository's admins (" + ms.Var + " is unset)"
}

// OpenAsks lists the open asks on the work items labelled with the tracker name of
// input-required.
func OpenAsks(ctx context.Context, e *Env) ([]*Ask, error) {
	var out []*Ask
	opts := &github.IssueListByRepoOptions{State: "open", Labels: []string{e.Policy.label("input-required")}, ListOptions: github.ListOptions{PerPage: 100}}
	for {
		items, resp, err := e.Client.Issues.ListByRepo(ctx, e.Owner, e.Repo, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the items awaiting input: %w", err)
		}
		for _, it := range items {
			asks, err := Asks(ctx, e, it.GetNumber())
			if err != nil {
				return nil, err
			}
			for _, a := range asks {
				if a.Resolved == "" {
					out = append(out, a)
				}
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Sweep re-notifies every open ask whose last notification is older than
// policy.box.human.sla_minutes (60 when unset), escalating to the next maintainer of the list:
// the Nth escalation goes to maintainer N mod len (the first, N=1, to the second maintainer: the
// ask itself went to all). It never resolves an ask. It returns the escalations sent.
func Sweep(ctx context.Context, e *Env) ([]*Ask, error) {
	sla := time.Duration(e.Policy.Box.Human.SLAMinutes) * time.Minute
	if sla <= 0 {
		sla = 60 * time.Minute
	}
	asks, err := OpenAsks(ctx, e)
	if err != nil {
		return nil, err
	}
	if len(asks) == 0 {
		fmt.Fprintln(e.Out, "no open asks")
		return nil, nil
	}
	ms, err := Maintainers(ctx, e)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	var sent []*Ask
	for _, a := range asks {
		if now.Sub(a.LastAt) < sla {
			continue
		}
		if paused, err := e.ItemPaused(ctx, a.Item); err != nil {
			return sent, err
		} else if paused {
			fmt.Fprintln(e.Out, e.pausedNote(a.Item)) // its ask waits, unescalated
			continue
		}
		k := a.Escalations + 1
		to := ms.Logins[k%len(ms.Logins)]
		body := fmt.Sprintf("<!-- autonomy:escalation token=%s n=%d at=%s to=%s -->\n@%s: the ask of %s above has waited %s (policy.box.human.sla_minutes is %d); escalation %d. Resolve it with `/agent approve|reject|answer %s`.\n",
			a.Token, k, now.Format(time.RFC3339), to, to, a.Actor, now.Sub(a.At).Round(time.Minute), int(sla/time.Minute), k, a.Token)
		if err := e.comment(ctx, a.Item, body); err != nil {
			return sent, err
		}
		if _, _, err := e.Client.Issues.AddAssignees(ctx, e.Owner, e.Repo, a.Item, []string{to}); err != nil {
			return sent, fmt.Errorf("assigning %s to #%d: %w", to, a.Item, err)
		}
		a.Escalations, a.LastAt = k, now
		sent = append(sent, a)
		fmt.Fprintf(e.Out, "escalated the ask of %s on #%d to @%s (escalation %d)\n", a.Actor, a.Item, to, k)
	}
	return sent, nil
}

// MaintainersActor names the ask of a profile that routes input-required to no human actor: the
// maintainers are engaged directly.
const MaintainersActor = "maintainers"

// engageHumanRequired engages, on a proposal's pull request that touches human-required paths,
// the human actor the profile routes input-required to (or the maintainers directly), and asks
// the maintainers for a review of the pull request.
func (e *Env) engageHumanRequired(ctx context.Context, p *Proposal) error {
	var ask strings.Builder
	fmt.Fprintf(&ask, "This pull request, proposed by `%s`, touches paths under `policy.box.risk.human_required_paths` or the governing documents (`documents.roles` vision and constitution):\n", e.Actor)
	for _, f := range p.HumanRequired {
		ask.WriteString("\n- `" + f + "`")
	}
	fmt.Fprintf(&ask, "\n\nIt merges only once a maintainer approves its head %s: with `/agent approve` and the token below, or an approving review of that commit. A new push needs a new approval.", p.Head)
	a, err := e.engageHead(ctx, p.PR, p.Head, ask.String())
	p.Engaged = a
	return err
}

// engageHead engages, on pull request n, the human actor the profile routes input-required to
// (or the maintainers directly) with ask, bound to head: its approval is the human gate's
// success on that commit only; and it asks the maintainers for a review of the pull request.
func (e *Env) engageHead(ctx context.Context, n int, head, ask string) (*Ask, error) {
	actor := e.InputActor
	if actor == "" {
		actor = MaintainersActor
	}
	a, err := engage(ctx, e, actor, n, ask, "", nil, head, nil)
	if err != nil {
		return nil, fmt.Errorf("engaging %s on #%d: %w", actor, n, err)
	}
	ms, err := Maintainers(ctx, e)
	if err != nil {
		return a, err
	}
	if _, _, err := e.Client.PullRequests.RequestReviewers(ctx, e.Owner, e.Repo, n, github.ReviewersRequest{Reviewers: ms.Logins}); err != nil {
		// The ask, the assignment and the mention stand; a review request GitHub refuses (a
		// maintainer without access, the author) is said in the log.
		fmt.Fprintf(e.Out, "warning: requesting the review of %s on #%d: %v\n", strings.Join(ms.Logins, ", "), n, err)
	}
	return a, nil
}

// openAskFor is the open ask on pull request n bound to head (nil when there is none): one ask
// per head, whoever engaged it (the propose job for human-required paths, the review job for a
// reviewer that asks for a person).
func (e *Env) openAskFor(ctx context.Context, n int, head string) (*Ask, error) {
	asks, err := Asks(ctx, e, n)
	if err != nil {
		return nil, err
	}
	for _, a := range asks {
		if a.Resolved == "" && a.Head != "" && strings.EqualFold(a.Head, head) {
			return a, nil
		}
	}
	return nil, nil
}
