package effect

import (
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// Bounds on what a read returns to the model.
const (
	maxReadComments = 50
	maxReadText     = 16 << 10
	maxListed       = 100
)

// Reads answers the read tools of a model job's MCP server with the job's read-only token, and
// resolves the actor of a run for the scope of a cancel. It never writes.
type Reads struct {
	Env       *Env
	Installed *Installed
	Actor     string
	// Params are the session's params, by env name, as the job received them.
	Params map[string]string
}

// Item is a work item as read_item returns it.
type Item struct {
	Item     string   `json:"item"`
	Title    string   `json:"title"`
	Body     string   `json:"body,omitempty"`
	State    string   `json:"state"`
	Labels   []string `json:"labels"`
	Comments []Note   `json:"comments,omitempty"`
	// Truncated is set when the body, a comment or the list of comments was cut.
	Truncated bool `json:"truncated,omitempty"`
}

// Note is one comment of an item.
type Note struct {
	Author string `json:"author"`
	Body   string `json:"body"`
}

// Read answers read_item, list_items, list_sessions and session_info.
func (r Reads) Read(ctx context.Context, tool string, in tools.Input) (any, error) {
	switch v := in.(type) {
	case *tools.ItemRef:
		return r.item(ctx, v.Item)
	case *tools.StateQuery:
		return r.items(ctx, v.State)
	case *tools.SessionQuery:
		return r.sessions(ctx, v.Actor)
	case *tools.Empty:
		a, _ := r.Installed.Actor(r.Actor)
		return map[string]any{"actor": r.Actor, "capabilities": a.Capabilities, "params": r.Params,
			"taskStates": r.Env.Policy.Box.TaskStates}, nil
	}
	return nil, fmt.Errorf("%s is not a read", tool)
}

// SessionActor is the actor whose workflow made run id.
func (r Reads) SessionActor(ctx context.Context, id string) (string, error) {
	return r.Env.runActor(ctx, r.Installed, id)
}

func (r Reads) item(ctx context.Context, ref string) (*Item, error) {
	n, err := ghwrite.Number("item", ref)
	if err != nil {
		return nil, err
	}
	e := r.Env
	is, _, err := e.Client.Issues.Get(ctx, e.Owner, e.Repo, n)
	if err != nil {
		return nil, err
	}
	it := &Item{Item: ref, Title: is.GetTitle(), State: is.GetState(), Labels: []string{}}
	it.Body, it.Truncated = cut(is.GetBody())
	for _, l := range is.Labels {
		it.Labels = append(it.Labels, l.GetName())
	}
	cs, _, err := e.Client.Issues.ListComments(ctx, e.Owner, e.Repo, n, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, err
	}
	if len(cs) > maxReadComments {
		cs, it.Truncated = cs[len(cs)-maxReadComments:], true
	}
	for _, c := range cs {
		body, cutOff := cut(c.GetBody())
		it.Truncated = it.Truncated || cutOff
		it.Comments = append(it.Comments, Note{Author: c.GetUser().GetLogin(), Body: body})
	}
	return it, nil
}

// items lists the open items carrying a state's label (closed ones for done and rejected).
func (r Reads) items(ctx context.Context, state string) ([]Item, error) {
	e := r.Env
	opts := &github.IssueListByRepoOptions{Labels: []string{e.Policy.label(state)}, State: "open", ListOptions: github.ListOptions{PerPage: maxListed}}
	if state == "done" || state == "rejected" {
		opts.State = "closed"
	}
	list, _, err := e.Client.Issues.ListByRepo(ctx, e.Owner, e.Repo, opts)
	if err != nil {
		return nil, err
	}
	out := []Item{}
	for _, is := range list {
		it := Item{Item: fmt.Sprint(is.GetNumber()), Title: is.GetTitle(), State: is.GetState(), Labels: []string{}}
		for _, l := range is.Labels {
			it.Labels = append(it.Labels, l.GetName())
		}
		out = append(out, it)
	}
	return out, nil
}

// Session is a run in flight, as list_sessions returns it.
type Session struct {
	Session string `json:"session"`
	Actor   string `json:"actor"`
	Status  string `json:"status"`
}

// sessions lists the actors' runs in flight (queued or in progress), of one actor when named.
func (r Reads) sessions(ctx context.Context, actor string) ([]Session, error) {
	e := r.Env
	out := []Session{}
	for _, status := range []string{"queued", "in_progress"} {
		runs, _, err := e.Client.Actions.ListRepositoryWorkflowRuns(ctx, e.Owner, e.Repo,
			&github.ListWorkflowRunsOptions{Status: status, ListOptions: github.ListOptions{PerPage: maxListed}})
		if err != nil {
			return nil, err
		}
		for _, run := range runs.WorkflowRuns {
			name := r.actorOfWorkflow(run.GetWorkflowID(), run.GetName())
			if name == "" || (actor != "" && name != actor) {
				continue
			}
			out = append(out, Session{Session: fmt.Sprint(run.GetID()), Actor: name, Status: run.GetStatus()})
		}
	}
	return out, nil
}

// actorOfWorkflow names the actor a run belongs to by its workflow's name, which the compiler
// sets to the actor's name.
func (r Reads) actorOfWorkflow(_ int64, name string) string {
	if slices.ContainsFunc(r.Installed.Actors, func(a InstalledActor) bool { return a.Name == name }) {
		return name
	}
	return ""
}

// cut bounds a text the model reads.
func cut(s string) (string, bool) {
	if len(s) <= maxReadText {
		return s, false
	}
	i := maxReadText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}
