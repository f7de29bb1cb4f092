package store

import (
	"context"
	"testing"
)

// TestReadsTakeNoWriteLock: asking for a paused run that is not there, or for a proposal, is a
// read: no write transaction, whose lock every other process's writes wait for. A paused run
// that is there is still taken once, in a write.
func TestReadsTakeNoWriteLock(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	before := st.Writes()
	if _, _, ok, err := st.TakePause(ctx, "absent"); err != nil || ok {
		t.Fatalf("TakePause of an absent token: ok %v, %v", ok, err)
	}
	if _, ok, err := st.ProposalReviewedBy(ctx, "1-aaaa"); err != nil || ok {
		t.Fatalf("ProposalReviewedBy: ok %v, %v", ok, err)
	}
	if _, ok, err := st.ProposalAwaiting(ctx, "1-aaaa"); err != nil || ok {
		t.Fatalf("ProposalAwaiting: ok %v, %v", ok, err)
	}
	if n := st.Writes() - before; n != 0 {
		t.Errorf("reads took %d write transactions, want none", n)
	}
	if err := st.SavePause(ctx, "tok", "1-aaaa", []byte(`{"step":1}`)); err != nil {
		t.Fatal(err)
	}
	state, session, ok, err := st.TakePause(ctx, "tok")
	if err != nil || !ok || session != "1-aaaa" || string(state) != `{"step":1}` {
		t.Fatalf("TakePause: %q %q %v %v", state, session, ok, err)
	}
	if _, _, ok, err := st.TakePause(ctx, "tok"); err != nil || ok {
		t.Fatalf("a token taken twice: ok %v, %v", ok, err)
	}
}
