package local

import (
	"context"
	"fmt"
	"strings"

	"github.com/autonomyhq/autonomy/internal/store"
)

// The code flow (codeHost github) pushes a proposal's head to its branch and opens its pull
// request with the operator's token too, so GitHub reports the pull request's opening and each
// new head as the operator's. On gh-actions the propose job does both with the workflow's token,
// for which GitHub fires no workflow: the code flow reviews the proposal itself, and an actor
// triggered by pull_request is not fired on it (nor can it fire itself again: an agent triggered
// by pull_request that proposes would otherwise run on each pull request it opens, without end).
// So the code flow records, before each push, the head it pushes to a branch (proposalPushKey),
// and the event source fires no actor on the opening or synchronize of a pull request of this
// repository from that branch at that head. A person's push to the branch (another head) fires
// as ever, and so does any other activity on the pull request (a label, a review, its closing).

// proposalPushPrefix starts the store's meta keys of the heads the code flow pushed, by branch.
const proposalPushPrefix = "github-proposal-push:"

func proposalPushKey(branch string) string { return proposalPushPrefix + branch }

// recordProposalPush records that the code flow is about to push head to branch on GitHub.
func recordProposalPush(ctx context.Context, s *store.Store, branch, head string) error {
	return s.Tx(ctx, func(tx *store.Tx) error { return tx.SetMeta(proposalPushKey(branch), head) })
}

// skipProposalPush reports whether ev is the opening or a new head of a pull request the code
// flow pushed (recordProposalPush), and says so in rep.
func skipProposalPush(tx *store.Tx, rep *PollReport, ev ghEvent, where string) (bool, error) {
	if ev.Name != "pull_request" || !ev.SameRepo || ev.HeadRef == "" || ev.HeadSHA == "" ||
		(ev.Action != "opened" && ev.Action != "reopened" && ev.Action != "synchronize") {
		return false, nil
	}
	head, ok, err := tx.Meta(proposalPushKey(ev.HeadRef))
	if err != nil || !ok || !strings.EqualFold(head, ev.HeadSHA) {
		return false, err
	}
	rep.Ignored = append(rep.Ignored, fmt.Sprintf("%s %s %d by %s %s fires nothing: its head %s is the one the runner pushed to %s for a proposal, which the code flow reviews itself",
		ev.Name, ev.Action, ev.ID, ev.Login, where, short(ev.HeadSHA), ev.HeadRef))
	return true, nil
}
