package effect

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/ir"
)

// A step playbook (seed 002) that is an actor's behavior runs in its agent job through
// `autonomy playbook run`. When a step's @elicit parks the run, the agent job uploads the run's
// state, and a trusted job posts the elicitation on the work item as an ask of the actor
// (EngageElicitation), whose marker carries the elicitation's kind. A maintainer answers it with
// the human seam's commands (Resolve checks that the verb fits the kind); the control workflow
// then dispatches the actor's workflow to resume the run, whose trusted resume job takes the
// answer from the maintainer's own command (ResumeAsk) and records the resume once (MarkResumed).

// Elicitation is what a step playbook's @elicit asks: Kind is input, confirm or select; Options
// are a select's.
type Elicitation struct {
	Kind    string
	Options []string
}

// marker is the elicitation's part of the ask marker ("" for a plain ask).
func (el *Elicitation) marker() string {
	if el == nil {
		return ""
	}
	s := " elicit=" + el.Kind
	if el.Kind == "select" {
		b, _ := json.Marshal(el.Options)
		s += " options=" + base64.RawURLEncoding.EncodeToString(b)
	}
	return s
}

// parseElicitation reads the marker's elicit= and options= (nil when the ask has none).
func parseElicitation(kind, options string) *Elicitation {
	if kind == "" {
		return nil
	}
	el := &Elicitation{Kind: kind}
	if b, err := base64.RawURLEncoding.DecodeString(options); err == nil && len(b) > 0 {
		_ = json.Unmarshal(b, &el.Options)
	}
	return el
}

// commands are the resolutions an ask offers, as "verb args".
func (el *Elicitation) commands() []string {
	switch {
	case el == nil:
		return []string{"approve", "reject <reason>", "answer <text>"}
	case el.Kind == "confirm":
		return []string{"approve", "reject <reason>"}
	case el.Kind == "select":
		return []string{"answer <option>", "reject <reason>"}
	}
	return []string{"answer <text>", "reject <reason>"}
}

// help says what the commands of an elicitation mean.
func (el *Elicitation) help() string {
	switch {
	case el == nil:
		return ""
	case el.Kind == "confirm":
		return "\n`approve` answers yes, `reject` answers no; the run then continues.\n"
	case el.Kind == "select":
		var b strings.Builder
		b.WriteString("\nThe options:\n\n")
		for _, o := range el.Options {
			b.WriteString("- " + o + "\n")
		}
		b.WriteString("\n`answer` with one of them continues the run; `reject` cancels it.\n")
		return b.String()
	}
	return "\n`answer` continues the run with your text; `reject` cancels it.\n"
}

// fits checks a resolution against the elicitation the ask carries (any fits a plain ask).
func (el *Elicitation) fits(verb, note string) error {
	if el == nil {
		return nil
	}
	note = strings.TrimSpace(note)
	switch {
	case verb == "reject":
		return nil
	case el.Kind == "confirm" && verb == "answer":
		if _, ok := ir.YesNo(note); !ok {
			return fmt.Errorf("this ask is a yes/no question: `/agent approve TOKEN` answers yes, `/agent reject TOKEN <reason>` answers no (an answer says yes or no, not %q)", clipText(note))
		}
	case el.Kind == "confirm":
	case verb == "approve":
		return fmt.Errorf("this ask wants %s: `/agent answer TOKEN <%s>`, or `/agent reject TOKEN <reason>` to cancel the run",
			map[string]string{"select": "one of its options", "input": "your text"}[el.Kind], map[string]string{"select": "option", "input": "text"}[el.Kind])
	case el.Kind == "select":
		if !slices.ContainsFunc(el.Options, func(o string) bool { return strings.EqualFold(o, note) }) {
			return fmt.Errorf("%q is not one of the options: %s", clipText(note), strings.Join(el.Options, ", "))
		}
	}
	return nil
}

func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// CommandNote reads a maintainer's command comment "/agent VERB TOKEN [text]": ok when its
// first line is that command (the words compared as Resolve's marker names them), and the text
// after the token (the first line's rest and every line after it), trimmed.
func CommandNote(body, verb, token string) (string, bool) {
	if !ghevent.Command(body) {
		// Only what the control job obeys, and what ghwrite refuses to post for a session.
		return "", false
	}
	first, rest, _ := strings.Cut(body, "\n")
	first = strings.TrimRight(first, "\r")
	f := strings.Fields(first)
	if len(f) < 3 || !strings.EqualFold(f[0], "/agent") || !strings.EqualFold(f[1], verb) || f[2] != token {
		return "", false
	}
	_, tail, _ := strings.Cut(first, token)
	return strings.TrimSpace(strings.TrimSpace(tail) + "\n" + rest), true
}

// EngageElicitation posts the elicitation of actor's paused step playbook run on work item n:
// the prompt, the commands that fit its kind (and a select's options), with the run's id in the
// marker (e.RunID: the run whose state the resume downloads).
func EngageElicitation(ctx context.Context, e *Env, actor string, n int, step, prompt string, el Elicitation) (*Ask, error) {
	if err := e.refusePaused(ctx, n); err != nil {
		return nil, err
	}
	switch el.Kind {
	case "input", "confirm", "select":
	default:
		return nil, fmt.Errorf("elicitation kind %q: want input, confirm or select", el.Kind)
	}
	if el.Kind == "select" && len(el.Options) == 0 {
		return nil, fmt.Errorf("the select of step %s has no options", step)
	}
	if e.RunID == "" {
		return nil, fmt.Errorf("GITHUB_RUN_ID is not set: the ask must name the run whose state resumes")
	}
	ask := fmt.Sprintf("The playbook of `%s` waits at step %s:\n\n> %s", actor, step, strings.ReplaceAll(strings.TrimSpace(prompt), "\n", "\n> "))
	return engage(ctx, e, actor, n, ask, "", &el, "", nil)
}

// ResumeAsk finds the ask with token on work item n and checks that run's playbook may resume
// with it, in the workflow of the actor e.Actor names: the run is a run of that actor's workflow,
// on the default branch, of the repository's own code (not a pull request's); the ask is the
// comment the run's own ask job recorded (comment, from its artifact: no other run can write
// there), an elicitation of that actor naming that run, posted after the run started; it is
// resolved by a maintainer's own command; and neither comment was ever edited (GitHub's
// lastEditedAt: any job's token can edit them). A refusal is a *Refused. That the pause is
// redeemed once is PausedArtifact's and SpendArtifact's, not a comment's.
func ResumeAsk(ctx context.Context, e *Env, n int, token, run string, comment int64) (*Ask, error) {
	if !safeSubject().MatchString(e.Actor) {
		return nil, fmt.Errorf("AUTONOMY_ACTOR is %q: the actor whose workflow resumes must be named", e.Actor)
	}
	src, err := sourceRun(ctx, e, run)
	if err != nil {
		return nil, err
	}
	asks, err := Asks(ctx, e, n)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(asks, func(a *Ask) bool { return a.Token == token })
	if i < 0 {
		return nil, &Refused{fmt.Sprintf("no ask on #%d has the token %s", n, token)}
	}
	a := asks[i]
	switch {
	case a.CommentID != comment:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d is not the comment run %s's ask job posted (%d): it does not resume that run", token, n, run, comment)}
	case a.Elicit == nil:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d is not a playbook's elicitation: nothing resumes from it", token, n)}
	case a.Actor != e.Actor:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d is %s's, not %s's: an actor resumes its own runs only", token, n, a.Actor, e.Actor)}
	case a.RunID != run:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d was posted by run %s, not run %s: a run resumes from its own ask only", token, n, a.RunID, run)}
	case a.Posted.Before(src.CreatedAt.Time):
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d was posted before run %s started: it is not that run's", token, n, run)}
	case a.Resolved == "":
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d is still open: no maintainer's command has resolved it", token, n)}
	case a.Resolved == Retracted:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d was withdrawn: nothing resumes from it", token, n)}
	}
	edited, err := lastEdited(ctx, e, a.askNode, a.answerNode)
	if err != nil {
		return nil, err
	}
	switch {
	case edited[a.askNode]:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d was edited after it was posted: it is not trusted to name the run it resumes", token, n)}
	case edited[a.answerNode]:
		return nil, &Refused{fmt.Sprintf("the maintainer's command that resolved the ask %s on #%d was edited after it was given: its answer is not trusted", token, n)}
	}
	return a, nil
}

// lastEdited asks GitHub which of the comments (GraphQL node ids) were ever edited
// (IssueComment.lastEditedAt, set by an edit of its body only).
func lastEdited(ctx context.Context, e *Env, nodes ...string) (map[string]bool, error) {
	for _, id := range nodes {
		if id == "" {
			return nil, fmt.Errorf("a comment has no node id: whether it was edited cannot be read")
		}
	}
	u := e.GraphQLURL
	if u == "" {
		u = "graphql"
	}
	body := map[string]any{
		"query":     `query($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id lastEditedAt } } }`,
		"variables": map[string]any{"ids": nodes},
	}
	req, err := e.Client.NewRequest("POST", u, body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data struct {
			Nodes []*struct {
				ID           string  `json:"id"`
				LastEditedAt *string `json:"lastEditedAt"`
			} `json:"nodes"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	if _, err := e.Client.Do(ctx, req, &out); err != nil {
		return nil, fmt.Errorf("reading whether the comments were edited: %w", err)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("reading whether the comments were edited: %s", out.Errors[0].Message)
	}
	got := map[string]bool{}
	seen := map[string]bool{}
	for _, nd := range out.Data.Nodes {
		if nd != nil {
			seen[nd.ID] = true
			got[nd.ID] = nd.LastEditedAt != nil
		}
	}
	for _, id := range nodes {
		if !seen[id] {
			return nil, fmt.Errorf("reading whether the comments were edited: GitHub returned no comment %s", id)
		}
	}
	return got, nil
}

// runInfo is what the resume reads of the run whose paused playbook it takes.
type runInfo struct {
	Path           string           `json:"path"`
	Event          string           `json:"event"`
	HeadBranch     string           `json:"head_branch"`
	CreatedAt      github.Timestamp `json:"created_at"`
	HeadRepository *struct {
		FullName string `json:"full_name"`
	} `json:"head_repository"`
}

// sourceRun reads run id and refuses it unless it is a run of e.Actor's workflow on the default
// branch, of the repository's own code: the paused playbook the resume downloads from it was
// uploaded by that workflow as compiled, not by a pull request's or a branch's version of it.
func sourceRun(ctx context.Context, e *Env, id string) (*runInfo, error) {
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return nil, &Refused{fmt.Sprintf("run %q is not a run id", id)}
	}
	req, err := e.Client.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs/%s", e.Owner, e.Repo, id), nil)
	if err != nil {
		return nil, err
	}
	r := new(runInfo)
	if resp, err := e.Client.Do(ctx, req, r); err != nil {
		if resp != nil && resp.StatusCode == 404 {
			return nil, &Refused{fmt.Sprintf("run %s is not a run of this repository", id)}
		}
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	def, err := e.DefaultBranch(ctx)
	if err != nil {
		return nil, err
	}
	path, _, _ := strings.Cut(r.Path, "@")
	switch want := ".github/workflows/" + e.Actor + ".yml"; {
	case path != want:
		return nil, &Refused{fmt.Sprintf("run %s ran %s, not %s: a run resumes only the paused playbook of its own actor's workflow", id, r.Path, want)}
	case strings.HasPrefix(r.Event, "pull_request") && r.Event != "pull_request_target":
		return nil, &Refused{fmt.Sprintf("run %s ran on a %s event, with a pull request's version of the workflow: its paused playbook is not resumed", id, r.Event)}
	case r.HeadBranch != def:
		return nil, &Refused{fmt.Sprintf("run %s ran on the branch %s, not the default branch %s: its paused playbook is not resumed", id, r.HeadBranch, def)}
	case r.HeadRepository == nil || !strings.EqualFold(r.HeadRepository.FullName, e.Owner+"/"+e.Repo):
		return nil, &Refused{fmt.Sprintf("run %s did not run this repository's own code: its paused playbook is not resumed", id)}
	}
	return r, nil
}

// PausedArtifact finds run's artifact of the paused playbook (name) that the ask a answers: there
// must be exactly one, uploaded before the ask was posted (a re-run of the run's agent job uploads
// a new one later, which an old answer must not resume). It returns the artifact's id.
func PausedArtifact(ctx context.Context, e *Env, run, name string, a *Ask) (int64, error) {
	req, err := e.Client.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs/%s/artifacts?name=%s", e.Owner, e.Repo, run, url.QueryEscape(name)), nil)
	if err != nil {
		return 0, err
	}
	var list struct {
		Artifacts []struct {
			ID        int64            `json:"id"`
			Name      string           `json:"name"`
			CreatedAt github.Timestamp `json:"created_at"`
		} `json:"artifacts"`
	}
	if _, err := e.Client.Do(ctx, req, &list); err != nil {
		return 0, fmt.Errorf("listing the artifacts of run %s: %w", run, err)
	}
	var ids []int64
	for _, x := range list.Artifacts {
		if x.Name != name {
			continue
		}
		if x.CreatedAt.After(a.Posted) {
			return 0, &Refused{fmt.Sprintf("run %s's artifact %s was uploaded after the ask %s was posted (the run's agent job ran again): the answer is not to that pause", run, name, a.Token)}
		}
		ids = append(ids, x.ID)
	}
	switch len(ids) {
	case 0:
		return 0, &Refused{fmt.Sprintf("run %s has no artifact %s left: its paused playbook was resumed already (or it expired)", run, name)}
	case 1:
		return ids[0], nil
	}
	return 0, &Refused{fmt.Sprintf("run %s has %d artifacts %s: which pause the answer is to is not known", run, len(ids), name)}
}

// SpendArtifact deletes the paused playbook's artifact id, once its answer was applied: the pause
// is redeemed once, whatever the comments on the item say afterwards, and a second resume of that
// run finds nothing to resume.
func SpendArtifact(ctx context.Context, e *Env, run string, id int64) error {
	if _, err := e.Client.Actions.DeleteArtifact(ctx, e.Owner, e.Repo, id); err != nil {
		return fmt.Errorf("deleting the paused playbook's artifact %d of run %s: %w", id, run, err)
	}
	return nil
}

// MarkResumed records on the ask's item that this run (e.RunID) resumed the ask's run: a record
// for people (the pause was spent by deleting its artifact, whatever comments say).
func MarkResumed(ctx context.Context, e *Env, a *Ask) error {
	what := fmt.Sprintf("Resuming the playbook of %s with the maintainer's %s", a.Actor, a.Resolved)
	if a.Resolved == "reject" && a.Elicit != nil && a.Elicit.Kind != "confirm" {
		what = fmt.Sprintf("The maintainer's reject cancels the playbook of %s: no further step runs", a.Actor)
	}
	body := fmt.Sprintf("<!-- autonomy:resumed token=%s run=%s -->\n%s", a.Token, e.RunID, what)
	if e.RunURL != "" {
		body += " (" + e.RunURL + ")"
	}
	return e.comment(ctx, a.Item, body+".\n")
}
