package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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
// as ever, and so does any other activity on the pull request (a label, a review, its closing)
// but one: the code flow arms GitHub's auto-merge with the operator's token too, so GitHub records
// the merge it makes, and the closing, as the operator's. On gh-actions the workflow token's
// auto-merge fires no workflow (and an agent triggered by pull_request closed that proposes would
// otherwise run again on each merge of its own proposals, without end): a closing by the runner's
// token of a pull request merged at the very head the code flow proposed from that branch, and
// armed, fires nothing (skipProposalMerge). A person's merge (another login) fires as ever.

// proposalPushPrefix starts the store's meta keys of the heads the code flow pushed, by branch;
// each value is the head and the Unix time of its record.
const proposalPushPrefix = "github-proposal-push:"

// proposalPushKept is how long a record of a push waits for its event: one the event source never
// matched (a push that moved no head, a pull request closed before the poll) is dropped when a
// later push is recorded after that.
const proposalPushKept = 7 * 24 * time.Hour

func proposalPushKey(branch string) string { return proposalPushPrefix + branch }

// recordProposalPush records that the code flow is about to push head to branch on GitHub, at
// now, and drops the records older than proposalPushKept.
func recordProposalPush(ctx context.Context, s *store.Store, branch, head string, now time.Time) error {
	return s.Tx(ctx, func(tx *store.Tx) error {
		keys, values, err := tx.MetaPrefix(proposalPushPrefix)
		if err != nil {
			return err
		}
		for i, k := range keys {
			if _, at := parseProposalPush(values[i]); now.Sub(at) > proposalPushKept {
				if err := tx.DeleteMeta(k); err != nil {
					return err
				}
			}
		}
		return tx.SetMeta(proposalPushKey(branch), head+" "+strconv.FormatInt(now.Unix(), 10))
	})
}

// parseProposalPush is a record's head and time (the zero time for a record without one).
func parseProposalPush(v string) (head string, at time.Time) {
	head, unix, _ := strings.Cut(v, " ")
	if n, err := strconv.ParseInt(unix, 10, 64); err == nil {
		at = time.Unix(n, 0)
	}
	return head, at
}

// skipProposalPush reports whether ev is the opening or a new head of a pull request the code
// flow pushed (recordProposalPush), and says so in rep; the record is spent then (one push, one
// event). writer is the login of the runner's token when GitHub said it: a pull request opened by
// anyone else is not the code flow's. A reopening is never the code flow's (it opens a new pull
// request when its last one is closed).
func skipProposalPush(tx *store.Tx, rep *PollReport, ev ghEvent, where, writer string, now time.Time) (bool, error) {
	if ev.Name != "pull_request" || !ev.SameRepo || ev.HeadRef == "" || ev.HeadSHA == "" ||
		(ev.Action != "opened" && ev.Action != "synchronize") ||
		(writer != "" && !strings.EqualFold(ev.Login, writer)) {
		return false, nil
	}
	key := proposalPushKey(ev.HeadRef)
	v, ok, err := tx.Meta(key)
	if err != nil || !ok {
		return false, err
	}
	// An opening by the runner's token from a branch the runner pushed is the code flow's,
	// whatever its head by now (a person may have pushed since, or a later push of the runner's
	// been recorded and failed). Without the token's login, and for a new head (whose pusher
	// GitHub's list does not name), the head must be the one pushed.
	head, at := parseProposalPush(v)
	if now.Sub(at) > proposalPushKept {
		return false, tx.DeleteMeta(key) // too old to explain an event now
	}
	why := fmt.Sprintf("its head %s is the one the runner pushed to %s for a proposal", short(ev.HeadSHA), ev.HeadRef)
	if !strings.EqualFold(head, ev.HeadSHA) {
		if ev.Action != "opened" || writer == "" {
			return false, nil
		}
		why = fmt.Sprintf("the runner opened it from %s, where it pushed %s for a proposal", ev.HeadRef, short(head))
	}
	rep.Ignored = append(rep.Ignored, fmt.Sprintf("%s %s %d by %s %s fires nothing: %s, which the code flow reviews itself",
		ev.Name, ev.Action, ev.ID, ev.Login, where, why))
	return true, tx.DeleteMeta(key)
}

// armedKey is the store's meta key of the head the code flow armed GitHub's auto-merge for, on
// proposal seq's pull request: recorded before it asks GitHub to, kept with the proposal.
func armedKey(seq int64) string { return "proposal-armed:" + strconv.FormatInt(seq, 10) }

// skipProposalMerge reports whether ev is the closing of a pull request the code flow's armed
// auto-merge merged, and says so in rep: the pull request a proposal was opened as
// (proposal-pull:<seq>), of this repository, merged at the head the code flow armed its
// auto-merge for (proposal-armed:<seq>), closed by the runner's token (writer, its login; "" when
// GitHub did not say: then nothing is skipped, as a person's merge cannot be told apart). A
// proposal approved but never armed (held for a maintainer, or vetted not to merge) is merged
// by a person: that fires.
func skipProposalMerge(tx *store.Tx, rep *PollReport, ev ghEvent, where, writer string) (bool, error) {
	if ev.Name != "pull_request" || ev.Action != "closed" || !ev.Merged || !ev.SameRepo || ev.HeadSHA == "" ||
		writer == "" || !strings.EqualFold(ev.Login, writer) {
		return false, nil
	}
	for _, st := range []store.ProposalState{store.ProposalApproved, store.ProposalMerged} {
		ps, err := tx.ProposalsOfHead(strings.ToLower(ev.HeadSHA), st)
		if err != nil {
			return false, err
		}
		for _, p := range ps {
			n, ok, err := tx.Meta(pullKey(p.Seq))
			if err != nil {
				return false, err
			}
			head, armed, err := tx.Meta(armedKey(p.Seq))
			if err != nil {
				return false, err
			}
			if !ok || n != ev.Ref || !armed || !strings.EqualFold(head, ev.HeadSHA) {
				continue
			}
			rep.Ignored = append(rep.Ignored, fmt.Sprintf("%s %s %d by %s %s fires nothing: the code flow's auto-merge of proposal %d (at %s) merged it",
				ev.Name, ev.Action, ev.ID, ev.Login, where, p.Seq, short(ev.HeadSHA)))
			return true, nil
		}
	}
	return false, nil
}
