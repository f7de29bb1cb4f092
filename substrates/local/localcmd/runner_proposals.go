package localcmd

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// listProposals reads the code flow's proposals runner list shows: the open ones, every one
// with --all; none when they cannot be read.
func listProposals(ctx context.Context, r *local.Runner, all bool) []store.Proposal {
	ps, err := r.Store.Proposals(ctx, all, 0)
	if err != nil || ps == nil {
		return []store.Proposal{}
	}
	return ps
}

// printProposals adds the proposals to runner list, one a line: where each stands.
func printProposals(w io.Writer, ps []store.Proposal) error {
	if len(ps) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROPOSAL\tSESSION\tACTOR\tBRANCH\tHEAD\tINTO\tSTATE")
	for _, p := range ps {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Seq, p.Session, p.Actor, cliout.TerminalSafe(p.Branch), p.Head[:min(len(p.Head), 12)], cliout.TerminalSafe(p.Target), cliout.TerminalSafe(p.String()))
	}
	return tw.Flush()
}

// sessionProposal is the proposal a session made, reviews or approves, for runner get.
func sessionProposal(ctx context.Context, r *local.Runner, id string) *store.Proposal {
	for _, find := range []func(context.Context, string) (store.Proposal, bool, error){r.Store.ProposalOf, r.Store.ProposalReviewedBy, r.Store.ProposalAwaiting} {
		if p, ok, err := find(ctx, id); err == nil && ok {
			return &p
		}
	}
	return nil
}

// printProposal adds a session's proposal to runner get.
func printProposal(w io.Writer, p *store.Proposal) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "proposal:  %d (session %s, branch %s at %s into %s): %s\n", p.Seq, p.Session, cliout.TerminalSafe(p.Branch), p.Head, cliout.TerminalSafe(p.Target), cliout.TerminalSafe(p.String()))
}
