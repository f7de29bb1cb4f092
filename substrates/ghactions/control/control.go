// Package control is what the generated control workflow of a gh-actions installation runs
// (autonomy gh control, autonomy gh sweep): it reads an operator's /agent command from the
// comment that fired the workflow and answers it (status, cancel, retry, the resolution of a
// human ask, the refusal of a command from an untrusted author), and it sweeps the open human
// asks for escalation. It never runs a model, and it treats the comment as data: nothing of it
// reaches a shell. See docs/gh-actions.md.
package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// Prefix starts every command.
const Prefix = "/agent"

// Command is a parsed /agent command: Verb is status, cancel, retry, approve, reject, answer, or
// an actor's name; Args the words after it on the first line; Text the rest of the comment after
// the verb (the first line's remainder and every line after it).
type Command struct {
	Verb string
	Args []string
	Text string
}

// Parse reads a comment: ok is false when it is no /agent command (ghevent.Command: its first
// line does not start with "/agent", in any case, followed by a space, a tab or the line's end).
func Parse(body string) (Command, bool) {
	// GitHub's startsWith, which gates the workflows, ignores case: so does the command word.
	if !ghevent.Command(body) {
		return Command{}, false
	}
	first, rest, _ := strings.Cut(body, "\n")
	after := strings.TrimRight(first, "\r")[len(Prefix):]
	fields := strings.Fields(after)
	if len(fields) == 0 {
		return Command{Verb: ""}, true
	}
	c := Command{Verb: strings.ToLower(fields[0]), Args: fields[1:]}
	_, tail, _ := strings.Cut(strings.TrimLeft(after, " \t"), fields[0])
	c.Text = strings.TrimSpace(strings.TrimLeft(tail, " \t") + "\n" + rest)
	return c, true
}

// Event is the comment that fired the control workflow, as the workflow passes it in env.
type Event struct {
	Body        string
	CommentID   int64
	CommentURL  string
	Item        int
	Author      string
	Association string
}

// Fleet is what the control job knows of the installation.
type Fleet struct {
	// Actors are every actor; Commanded those an "/agent <actor>" comment fires (an
	// issue_comment trigger in command mode); Roles the trusted author associations; Elicits
	// those whose behavior is a step playbook asking a person (@elicit): the resolution of such
	// an actor's ask resumes its run.
	Actors, Commanded, Roles, Elicits []string
}

// Outcome is what Handle did: the reaction and the reply it left (either may be empty).
type Outcome struct {
	Reaction, Reply string
	Refused         bool
}

// usage lists the commands, for a reply to an unknown one.
const usage = "Commands: `/agent status`, `/agent cancel <run id|actor>`, `/agent retry <run id>`, `/agent approve|reject|answer|confirm <token> [text]`, `/agent <actor> [text]`."

// Handle answers one comment. A comment that is no /agent command is left alone. Every command is
// acknowledged with a reaction (+1 done, -1 refused, eyes fired) and, when there is something to
// say, a reply; a refused one always says why.
func Handle(ctx context.Context, e *effect.Env, f Fleet, ev Event) (*Outcome, error) {
	c, ok := Parse(ev.Body)
	if !ok {
		fmt.Fprintln(e.Out, "not an /agent command: nothing to do")
		return &Outcome{}, nil
	}
	trusted := slices.Contains(f.Roles, ev.Association)
	refuse := func(why string) (*Outcome, error) {
		return finish(ctx, e, ev, &Outcome{Reaction: "-1", Reply: "@" + ev.Author + ": `" + firstLine(ev.Body) + "` was refused: " + why, Refused: true})
	}
	var out *Outcome
	var err error
	switch {
	case c.Verb == "approve" || c.Verb == "reject" || c.Verb == "answer" || c.Verb == "confirm":
		token := ""
		if len(c.Args) > 0 {
			token = c.Args[0]
		}
		note := strings.TrimSpace(strings.TrimPrefix(c.Text, token))
		a, rerr := effect.Resolve(ctx, e, effect.Resolution{Item: ev.Item, By: ev.Author, Verb: c.Verb, Token: token, Note: note, CommentURL: ev.CommentURL, CommentID: ev.CommentID})
		var r *effect.Refused
		if errors.As(rerr, &r) {
			return refuse(r.Reason)
		}
		if rerr != nil {
			return nil, rerr
		}
		out = &Outcome{Reaction: "+1"}
		fmt.Fprintf(e.Out, "recorded %s of the ask of %s on #%d by %s\n", c.Verb, a.Actor, ev.Item, ev.Author)
		if a.Elicit != nil && slices.Contains(f.Elicits, a.Actor) {
			if err := resume(ctx, e, a); err != nil {
				// The resolution stands: a retry of the dispatch is /agent retry of nothing, so
				// the reply says how to resume by hand.
				out.Reply = fmt.Sprintf("The answer is recorded, but resuming the run of %s failed: %v. Dispatch %s with autonomy_resume_run=%s, autonomy_resume_item=%d, autonomy_resume_ask=%s to resume it.",
					a.Actor, err, a.Actor+".yml", a.RunID, a.Item, a.Token)
			} else {
				out.Reply = fmt.Sprintf("Resuming the playbook of %s (run %s) with this answer.", a.Actor, a.RunID)
			}
		}
	case !trusted:
		return refuse(fmt.Sprintf("its author's association with the repository is %s; commands are taken from %s only", ev.Association, strings.Join(f.Roles, ", ")))
	case c.Verb == "status":
		out, err = status(ctx, e, f)
	case c.Verb == "cancel" || c.Verb == "retry":
		ms, merr := effect.Maintainers(ctx, e)
		if merr != nil {
			return nil, merr
		}
		if !ms.Has(ev.Author) {
			return refuse("@" + ev.Author + " is not a maintainer; only a maintainer cancels or retries a run")
		}
		if len(c.Args) != 1 {
			return refuse("say which: `/agent " + c.Verb + " <run id>`" + map[string]string{"cancel": " or `/agent cancel <actor>`", "retry": ""}[c.Verb])
		}
		if c.Verb == "cancel" {
			out, err = cancel(ctx, e, f, c.Args[0])
		} else {
			out, err = retry(ctx, e, f, c.Args[0])
		}
	case slices.ContainsFunc(f.Commanded, func(a string) bool { return strings.EqualFold(a, c.Verb) }):
		// The actor's own workflow fires on this comment; the control job acknowledges it.
		out = &Outcome{Reaction: "eyes"}
		fmt.Fprintf(e.Out, "%s is fired by its own workflow\n", c.Verb)
	case slices.ContainsFunc(f.Actors, func(a string) bool { return strings.EqualFold(a, c.Verb) }):
		return refuse(fmt.Sprintf("%s is not started by comments (it declares no issue_comment trigger)", c.Verb))
	default:
		return refuse(fmt.Sprintf("unknown command %q. %s", c.Verb, usage))
	}
	if err != nil {
		var r *effect.Refused
		if errors.As(err, &r) {
			return refuse(r.Reason)
		}
		return nil, err
	}
	return finish(ctx, e, ev, out)
}

// Resume inputs: the workflow of an actor whose step playbook elicits declares them; the control
// job dispatches it with them once the ask is resolved.
const (
	ResumeRunInput  = "autonomy_resume_run"
	ResumeItemInput = "autonomy_resume_item"
	ResumeAskInput  = "autonomy_resume_ask"
)

// resume dispatches the workflow of the ask's actor, on the default branch, to resume the run
// that posted it.
func resume(ctx context.Context, e *effect.Env, a *effect.Ask) error {
	def, err := e.DefaultBranch(ctx)
	if err != nil {
		return err
	}
	_, err = e.Client.Actions.CreateWorkflowDispatchEventByFileName(ctx, e.Owner, e.Repo, a.Actor+".yml", github.CreateWorkflowDispatchEventRequest{
		Ref:    def,
		Inputs: map[string]any{ResumeRunInput: a.RunID, ResumeItemInput: strconv.Itoa(a.Item), ResumeAskInput: a.Token},
	})
	if err != nil {
		return fmt.Errorf("dispatching %s.yml: %w", a.Actor, err)
	}
	fmt.Fprintf(e.Out, "dispatched %s.yml to resume run %s\n", a.Actor, a.RunID)
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(strings.ReplaceAll(l, "`", "'"))
}

// finish leaves the outcome's reaction and reply on the comment's item.
func finish(ctx context.Context, e *effect.Env, ev Event, o *Outcome) (*Outcome, error) {
	if o.Reaction != "" && ev.CommentID != 0 {
		if _, _, err := e.Client.Reactions.CreateIssueCommentReaction(ctx, e.Owner, e.Repo, ev.CommentID, o.Reaction); err != nil {
			return nil, fmt.Errorf("reacting to comment %d: %w", ev.CommentID, err)
		}
	}
	if o.Reply != "" {
		if _, _, err := e.Client.Issues.CreateComment(ctx, e.Owner, e.Repo, ev.Item, &github.IssueComment{Body: github.String(o.Reply)}); err != nil {
			return nil, fmt.Errorf("replying on #%d: %w", ev.Item, err)
		}
	}
	fmt.Fprintln(e.Out, o.Reply)
	if o.Refused {
		return o, &effect.Refused{Reason: strings.TrimSpace(o.Reply)}
	}
	return o, nil
}

// run is a workflow run with the path of its workflow file, which go-github v62 does not decode.
type run struct {
	github.WorkflowRun
	Path string `json:"path"`
}

// getRun fetches run id (nil when GitHub knows none).
func getRun(ctx context.Context, e *effect.Env, id int64) (*run, error) {
	req, err := e.Client.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs/%d", e.Owner, e.Repo, id), nil)
	if err != nil {
		return nil, err
	}
	r := new(run)
	if resp, err := e.Client.Do(ctx, req, r); err != nil {
		if resp != nil && resp.StatusCode == 404 {
			return nil, nil
		}
		return nil, fmt.Errorf("getting run %d: %w", id, err)
	}
	return r, nil
}

// inFlight lists the runs of the fleet's workflows that have not completed, newest first.
func inFlight(ctx context.Context, e *effect.Env, f Fleet) ([]*run, error) {
	var out []*run
	for _, st := range []string{"in_progress", "queued", "waiting", "requested", "pending"} {
		for page := 1; page != 0; {
			req, err := e.Client.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs?status=%s&per_page=100&page=%d", e.Owner, e.Repo, st, page), nil)
			if err != nil {
				return nil, err
			}
			var list struct {
				Runs []*run `json:"workflow_runs"`
			}
			resp, err := e.Client.Do(ctx, req, &list)
			if err != nil {
				return nil, fmt.Errorf("listing runs: %w", err)
			}
			for _, r := range list.Runs {
				if actorOf(r, f) != "" && !slices.ContainsFunc(out, func(o *run) bool { return o.GetID() == r.GetID() }) {
					out = append(out, r)
				}
			}
			page = resp.NextPage
		}
	}
	slices.SortFunc(out, func(a, b *run) int {
		if c := b.GetCreatedAt().Compare(a.GetCreatedAt().Time); c != 0 {
			return c
		}
		return int(b.GetID() - a.GetID())
	})
	return out, nil
}

// actorOf is the actor whose workflow ran r ("" for a workflow not of the fleet).
func actorOf(r *run, f Fleet) string {
	if r == nil {
		return ""
	}
	p, _, _ := strings.Cut(r.Path, "@")
	name := strings.TrimSuffix(strings.TrimPrefix(p, ".github/workflows/"), ".yml")
	if slices.Contains(f.Actors, name) {
		return name
	}
	return ""
}

// status replies with the sessions in flight: the runs of the fleet's workflows and the open
// human asks.
func status(ctx context.Context, e *effect.Env, f Fleet) (*Outcome, error) {
	runs, err := inFlight(ctx, e, f)
	if err != nil {
		return nil, err
	}
	asks, err := effect.OpenAsks(ctx, e)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("**In-flight sessions**\n\n| actor | run id | status | started | work item |\n|---|---|---|---|---|\n")
	for _, r := range runs {
		// GitHub does not return a run's inputs: the work item of a run is not known here.
		fmt.Fprintf(&b, "| %s | %d | %s | %s | — |\n", actorOf(r, f), r.GetID(), r.GetStatus(), r.GetCreatedAt().UTC().Format(time.RFC3339))
	}
	for _, a := range asks {
		run := "—"
		if a.RunID != "" {
			run = a.RunID
		}
		kind := "human"
		if a.Elicit != nil {
			kind = "playbook"
		}
		fmt.Fprintf(&b, "| %s (%s) | %s | running: awaiting input (escalations: %d) | %s | #%d |\n", a.Actor, kind, run, a.Escalations, a.At.UTC().Format(time.RFC3339), a.Item)
	}
	if len(runs)+len(asks) == 0 {
		b.WriteString("| — | — | nothing in flight | — | — |\n")
	}
	return &Outcome{Reaction: "+1", Reply: b.String()}, nil
}

// cancel cancels one run of the fleet, or every in-flight run of an actor.
func cancel(ctx context.Context, e *effect.Env, f Fleet, target string) (*Outcome, error) {
	var ids []int64
	if id, err := strconv.ParseInt(target, 10, 64); err == nil {
		r, err := getRun(ctx, e, id)
		if err != nil {
			return nil, err
		}
		if actorOf(r, f) == "" {
			return nil, &effect.Refused{Reason: fmt.Sprintf("run %s is not a run of this fleet's workflows", target)}
		}
		ids = append(ids, id)
	} else if slices.Contains(f.Actors, target) {
		runs, err := inFlight(ctx, e, f)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			if actorOf(r, f) == target {
				ids = append(ids, r.GetID())
			}
		}
		if len(ids) == 0 {
			return &Outcome{Reaction: "+1", Reply: fmt.Sprintf("%s has no run in flight: nothing to cancel.", target)}, nil
		}
	} else {
		return nil, &effect.Refused{Reason: fmt.Sprintf("%q is neither a run id nor an actor of this fleet (%s)", target, strings.Join(f.Actors, ", "))}
	}
	var done []string
	for _, id := range ids {
		if _, err := e.Client.Actions.CancelWorkflowRunByID(ctx, e.Owner, e.Repo, id); err != nil {
			var ae *github.AcceptedError
			if !errors.As(err, &ae) {
				return nil, fmt.Errorf("cancelling run %d: %w", id, err)
			}
		}
		done = append(done, strconv.FormatInt(id, 10))
	}
	return &Outcome{Reaction: "+1", Reply: "Cancelling run " + strings.Join(done, ", ") + "."}, nil
}

// retry re-runs a run of the fleet: GitHub re-runs it with the same inputs on the same ref.
func retry(ctx context.Context, e *effect.Env, f Fleet, target string) (*Outcome, error) {
	id, err := strconv.ParseInt(target, 10, 64)
	if err != nil {
		return nil, &effect.Refused{Reason: fmt.Sprintf("%q is not a run id", target)}
	}
	r, err := getRun(ctx, e, id)
	if err != nil {
		return nil, err
	}
	if actorOf(r, f) == "" {
		return nil, &effect.Refused{Reason: fmt.Sprintf("run %s is not a run of this fleet's workflows", target)}
	}
	if r.GetStatus() != "completed" {
		return nil, &effect.Refused{Reason: fmt.Sprintf("run %d is %s; only a completed run is retried", id, r.GetStatus())}
	}
	if _, err := e.Client.Actions.RerunWorkflowByID(ctx, e.Owner, e.Repo, id); err != nil {
		return nil, fmt.Errorf("re-running run %d: %w", id, err)
	}
	return &Outcome{Reaction: "+1", Reply: fmt.Sprintf("Retrying run %d of %s, with the same inputs on the same ref.", id, actorOf(r, f))}, nil
}
