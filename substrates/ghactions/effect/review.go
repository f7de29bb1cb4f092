package effect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/internal/strictjson"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// StatusContext is the commit status a review posts, the one branch protection requires.
const StatusContext = "agent-review"

// Verdict is what Review did.
type Verdict struct {
	// SHA is the head the verdict named; State the status posted ("" when none was).
	SHA, State string
	// Stale is a verdict for a head the pull request no longer has: discarded.
	Stale bool
}

// Review checks the verdict file against the reviewer's result contract and the pull request's
// current head, and only then posts the agent-review status on that head and the summary as a
// review comment. A verdict for another head is discarded with a note on the pull request.
func Review(ctx context.Context, e *Env, verdictPath string) (*Verdict, error) {
	pr, err := ghevent.ItemNumber(e.Subject)
	if err != nil {
		return nil, fmt.Errorf("the subject (the pull request): %w", err)
	}
	if err := e.refusePaused(ctx, pr); err != nil {
		return nil, err
	}
	data, err := readResult(verdictPath)
	if errors.Is(err, errTooLarge) {
		return nil, &Refused{fmt.Sprintf("the verdict is over %d bytes: no status is posted", maxResultFile)}
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Refused{"the reviewer left no verdict: no status is posted"}
	}
	res, err := e.resultContract()
	if err != nil {
		return nil, err
	}
	diags, err := ir.ValidateResult(res, verdictPath, data)
	if err != nil {
		return nil, err
	}
	if len(diags) > 0 {
		return nil, &Refused{"the verdict is refused, and no status is posted:\n" + diags.String()}
	}
	var v struct {
		HeadSHA string          `json:"headSha"`
		Verdict string          `json:"verdict"`
		Summary string          `json:"summary"`
		Find    json.RawMessage `json:"findings"`
	}
	if err := strictjson.Unmarshal(data, &v); err != nil { // the keys the contract checked, exactly
		return nil, &Refused{"the verdict is refused, and no status is posted: " + err.Error()}
	}
	if v.HeadSHA == "" {
		return nil, &Refused{"the verdict names no headSha: a verdict binds to the commit it reviewed"}
	}
	pull, resp, err := e.Client.PullRequests.Get(ctx, e.Owner, e.Repo, pr)
	if resp != nil && resp.StatusCode == 404 {
		return nil, &Refused{fmt.Sprintf("#%d is not a pull request: a verdict applies to a pull request's head", pr)}
	}
	if err != nil {
		return nil, fmt.Errorf("reading #%d: %w", pr, err)
	}
	if !e.ownHead(pull) && !slices.Contains(e.Policy.TrustedRoles(), pull.GetAuthorAssociation()) {
		// As the pull_request_target trigger is gated, whatever fired the reviewer (a dispatch, a
		// command): a fork's head was pushed by someone the repository does not trust.
		return nil, &Refused{fmt.Sprintf("#%d comes from a fork (head %s) by %s, whose association %s is not one of %s: no %s status is posted on it",
			pr, pull.GetHead().GetLabel(), pull.GetUser().GetLogin(), pull.GetAuthorAssociation(), strings.Join(e.Policy.TrustedRoles(), ", "), StatusContext)}
	}
	head := pull.GetHead().GetSHA()
	out := &Verdict{SHA: v.HeadSHA}
	if !strings.EqualFold(head, v.HeadSHA) {
		out.Stale = true
		note := fmt.Sprintf("**%s**: a verdict for %s was discarded: the head of this pull request is now %s, which it did not review.", e.Actor, v.HeadSHA, head)
		if err := e.comment(ctx, pr, note); err != nil {
			return nil, err
		}
		fmt.Fprintln(e.Out, note)
		return out, nil
	}
	// Only an approval passes: anything else leaves the required check failing.
	out.State = "failure"
	if v.Verdict == "approve" || v.Verdict == "success" {
		out.State = "success"
	}
	desc := v.Verdict + ": " + v.Summary
	if r := []rune(desc); len(r) > 140 {
		desc = string(r[:139]) + "…"
	}
	st := &github.RepoStatus{State: github.String(out.State), Context: github.String(StatusContext), Description: github.String(desc)}
	if e.RunURL != "" {
		st.TargetURL = github.String(e.RunURL)
	}
	if _, _, err := e.Client.Repositories.CreateStatus(ctx, e.Owner, e.Repo, head, st); err != nil {
		return nil, fmt.Errorf("posting %s on %s: %w", StatusContext, head, err)
	}
	body := fmt.Sprintf("**%s** (%s on %s)\n\n%s", e.Actor, v.Verdict, head, tools.Neutralize(v.Summary))
	if _, _, err := e.Client.PullRequests.CreateReview(ctx, e.Owner, e.Repo, pr, &github.PullRequestReviewRequest{
		CommitID: github.String(head), Body: github.String(body), Event: github.String("COMMENT")}); err != nil {
		return nil, fmt.Errorf("posting the review on #%d: %w", pr, err)
	}
	fmt.Fprintf(e.Out, "%s: %s on %s (#%d)\n", StatusContext, out.State, head, pr)
	return out, nil
}

// resultContract is the reviewer's result contract: the installed one (a named contract by its
// title, else its inline schema), or autonomy.review.v1.
func (e *Env) resultContract() (*ir.Result, error) {
	if e.ResultSchema == "" {
		return &ir.Result{Named: ir.String{Value: ir.ReviewContract}}, nil
	}
	var doc map[string]any
	if err := readJSON(e.ResultSchema, &doc); err != nil {
		return nil, err
	}
	delete(doc, "//")
	for _, k := range []string{"title", "$id"} {
		if name, ok := doc[k].(string); ok {
			if _, named := ir.ResultContracts[name]; named {
				return &ir.Result{Named: ir.String{Value: name}}, nil
			}
		}
	}
	return &ir.Result{Inline: doc}, nil
}
