package store

import (
	"context"
	"path/filepath"
	"testing"
)

func TestProposals(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	// A tool call records the proposal first; the session's end finds it and adds nothing.
	p, created, err := st.AddProposal(ctx, Proposal{Session: "1-abcd", Actor: "develop", Branch: "feat", Title: "Greet"})
	if err != nil || !created || p.State != ProposalProposed || p.Seq == 0 {
		t.Fatalf("add: %+v %v %v", p, created, err)
	}
	again, created, err := st.AddProposal(ctx, Proposal{Session: "1-abcd", Actor: "develop", Branch: "other"})
	if err != nil || created || again.Branch != "feat" || again.Title != "Greet" {
		t.Fatalf("second add: %+v %v %v", again, created, err)
	}
	// A move from a state it is not in changes nothing.
	if _, changed, err := st.MoveProposal(ctx, p.Seq, []ProposalState{ProposalApproved}, func(m *Proposal) { m.State = ProposalMerged }); err != nil || changed {
		t.Fatalf("move from the wrong state: %v %v", changed, err)
	}
	if _, changed, err := st.MoveProposal(ctx, p.Seq, []ProposalState{ProposalProposed}, func(m *Proposal) { m.State, m.Reviewer = ProposalInReview, "2-abcd" }); err != nil || !changed {
		t.Fatalf("move: %v %v", changed, err)
	}
	if got, ok, err := st.ProposalReviewedBy(ctx, "2-abcd"); err != nil || !ok || got.Seq != p.Seq || got.State != ProposalInReview {
		t.Fatalf("by reviewer: %+v %v %v", got, ok, err)
	}
	if open, err := st.Proposals(ctx, false, 0); err != nil || len(open) != 1 {
		t.Fatalf("open proposals: %+v %v", open, err)
	}
	st.MoveProposal(ctx, p.Seq, nil, func(m *Proposal) { m.State, m.Reason = ProposalRefused, "stale" })
	if open, _ := st.Proposals(ctx, false, 0); len(open) != 0 {
		t.Fatalf("a refused proposal is listed as open: %+v", open)
	}
	if all, _ := st.Proposals(ctx, true, 0); len(all) != 1 || all[0].String() != "refused: stale" {
		t.Fatalf("all proposals: %+v", all)
	}
}

func TestThrottles(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.SetThrottle(ctx, Throttle{Scope: ItemScope("42"), Reason: "flaky"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetThrottle(ctx, Throttle{Scope: FleetScope, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	ts, err := st.Throttles(ctx)
	if err != nil || len(ts) != 2 || ts[0].Scope != FleetScope || ts[1].Reason != "flaky" {
		t.Fatalf("throttles: %+v %v", ts, err)
	}
	if ok, err := st.ClearThrottle(ctx, FleetScope); !ok || err != nil {
		t.Fatalf("clear: %v %v", ok, err)
	}
	if ok, _ := st.ClearThrottle(ctx, FleetScope); ok {
		t.Fatal("cleared twice")
	}
}
