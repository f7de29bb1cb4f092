package effect

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/tools"
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

// Item is a work item as read_item returns it (ghwrite.Item).
type Item = ghwrite.Item

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
	return r.repo().ReadItem(ctx, ref)
}

// items lists the items in a lifecycle state (ghwrite.Repo.ListItems).
func (r Reads) items(ctx context.Context, state string) ([]Item, error) {
	return r.repo().ListItems(ctx, state)
}

// repo is the repository read, its lifecycle states named by the profile's taskStates.
func (r Reads) repo() ghwrite.Repo {
	return ghwrite.Repo{Client: r.Env.Client, Owner: r.Env.Owner, Name: r.Env.Repo, Label: r.Env.Policy.label}
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
			&github.ListWorkflowRunsOptions{Status: status, ListOptions: github.ListOptions{PerPage: ghwrite.MaxListed}})
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
