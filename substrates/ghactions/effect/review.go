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
	var v verdictDoc
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
	if owner := pull.GetHead().GetRepo().GetOwner().GetLogin(); !e.ownHead(pull) && !strings.EqualFold(owner, pull.GetUser().GetLogin()) {
		// The author's association vouches for the author, not for the fork's owner, who
		// pushes its head: a trusted member's pull request from someone else's fork is not.
		return nil, &Refused{fmt.Sprintf("#%d comes from %s's fork (head %s), opened by %s: the fork's owner pushes its head, and the author's association does not vouch for them: no %s status is posted on it",
			pr, owner, pull.GetHead().GetLabel(), pull.GetUser().GetLogin(), StatusContext)}
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
	if err := e.post(ctx, pr, head, &v, out); err != nil {
		return nil, err
	}
	return out, nil
}

// verdictDoc is what Review reads of a verdict its contract checked.
type verdictDoc struct {
	HeadSHA string          `json:"headSha"`
	Verdict string          `json:"verdict"`
	Summary string          `json:"summary"`
	Find    json.RawMessage `json:"findings"`
	// Person is open-autonomy.review.v1's humanApprovalRequired (ir.PersonKey): the code is
	// approved, and a person must approve the change (askPerson).
	Person bool `json:"humanApprovalRequired"`
}

// post posts verdict v of pull request pr's current head: agent-review, success for an
// approval only, and the summary as a review comment; a person the approval asks for is engaged
// and the human gate held pending first (askPerson), so that auto-merge, armed on the pull
// request, waits on both.
func (e *Env) post(ctx context.Context, pr int, head string, v *verdictDoc, out *Verdict) error {
	// Only an approval passes: anything else leaves the required check failing.
	out.State = "failure"
	if v.Verdict == "approve" || v.Verdict == "success" {
		out.State = "success"
	}
	var person string
	if out.State == "success" && v.Person {
		var err error
		if person, err = e.askPerson(ctx, pr, head, v.Summary); err != nil {
			return err
		}
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
		return fmt.Errorf("posting %s on %s: %w", StatusContext, head, err)
	}
	body := fmt.Sprintf("**%s** (%s on %s)\n\n%s%s", e.Actor, v.Verdict, head, tools.Neutralize(v.Summary), person)
	if _, _, err := e.Client.PullRequests.CreateReview(ctx, e.Owner, e.Repo, pr, &github.PullRequestReviewRequest{
		CommitID: github.String(head), Body: github.String(body), Event: github.String("COMMENT")}); err != nil {
		return fmt.Errorf("posting the review on #%d: %w", pr, err)
	}
	fmt.Fprintf(e.Out, "%s: %s on %s (#%d)\n", StatusContext, out.State, head, pr)
	if person == "" {
		return nil
	}
	// The human-gate job may have evaluated the head by its paths meanwhile, and posted its
	// success after the pending above: the reviewer's ask holds it pending again.
	return e.holdGate(ctx, head)
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

// maxAskQuote is the most of the reviewer's summary its ask for a person quotes (runes): an
// inline contract may leave the summary unbounded, and GitHub refuses a comment over 65536
// characters, which would leave the ask unposted and the pull request unreviewed.
const maxAskQuote = 2000

// personAsked is the human gate's description while the reviewer's ask for a person is open.
const personAsked = "the reviewer asks that a person approve this head: a maintainer must approve it"

// askPerson holds pull request n's head for a person, as its reviewer asked
// (humanApprovalRequired, why its summary): unless a maintainer already answered for that head
// (the human gate is their approval or rejection of it), it engages the maintainers with an ask
// bound to the head, or keeps the open one bound to it (one ask per head, whoever engaged it),
// and posts the human gate pending there. It returns what the review's comment says of it.
func (e *Env) askPerson(ctx context.Context, n int, head, why string) (string, error) {
	last, err := e.latestGate(ctx, head)
	if err != nil {
		return "", err
	}
	if answered(last) {
		return fmt.Sprintf("\n\nThe reviewer asks that a person approve this change; a maintainer already answered for %s (%s: %s, %s).", head, HumanApprovalContext, last.GetState(), last.GetDescription()), nil
	}
	a, err := e.openAskFor(ctx, n, head)
	if err != nil {
		return "", err
	}
	if a == nil {
		if r := []rune(why); len(r) > maxAskQuote {
			why = string(r[:maxAskQuote]) + "…"
		}
		ask := fmt.Sprintf("The reviewer `%s` approves the code of this pull request and asks that a person approve the change:\n\n> %s\n\nIt merges only once a maintainer approves its head %s: with `/agent approve` and the token below, or an approving review of that commit. A new push needs a new review, and a new approval if its reviewer asks again.",
			e.Actor, strings.ReplaceAll(tools.Neutralize(why), "\n", "\n> "), head)
		if a, err = e.engageHead(ctx, n, head, ask); err != nil {
			return "", err
		}
	}
	if last == nil || last.GetState() != "pending" {
		if err := e.postGate(ctx, head, "pending", personAsked); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("\n\n**A person must approve this change** (the reviewer's humanApprovalRequired): %s stays pending, and nothing merges, until a maintainer approves it: a maintainer must approve %s with `/agent approve %s` (the ask above) or an approving review of that commit.", HumanApprovalContext, head, a.Token), nil
}

// answered says whether the human gate last is a maintainer's answer for its head: their
// approval (/agent approve, or a review of that head) or their rejection.
func answered(last *github.RepoStatus) bool {
	if last == nil {
		return false
	}
	desc := last.GetDescription()
	return last.GetState() == "failure" || last.GetState() == "success" && (strings.HasSuffix(desc, commandApproval) || strings.HasSuffix(desc, reviewApproval))
}

// holdGate posts the human gate of head pending again when it is a success that is no
// maintainer's answer (the paths' success, posted by a human-gate job that evaluated the head
// while the review asked for a person).
func (e *Env) holdGate(ctx context.Context, head string) error {
	last, err := e.latestGate(ctx, head)
	if err != nil || last == nil || last.GetState() != "success" || answered(last) {
		return err
	}
	return e.postGate(ctx, head, "pending", personAsked)
}
