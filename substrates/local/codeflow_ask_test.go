//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The code flow's ask is the operator's: a session holding agent:update is refused resolving it
// even with a valid token, and refused a new token; the operator's new token makes the one
// before useless, and the operator's resolution merges.
func TestCodeFlowAskIsTheOperators(t *testing.T) {
	t.Parallel()
	f := flowFleet
	f.yml = strings.Replace(f.yml, "    capabilities: [code:review]\n    result:", "    capabilities: [code:review, agent:update, agent:list]\n    result:", 1)
	dir := installFleet(t, f, true)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "install")
	g := &flowRig{t: t, dir: dir, r: newRunner(t, dir, Options{})}
	ctx := context.Background()
	p := g.propose("develop", "docs/VISION.md", "a new vision", "approve")
	if p.State != store.ProposalApproved || p.Ask == "" {
		t.Fatalf("before the maintainer: %+v", p)
	}
	if data, err := os.ReadFile(g.r.In.Path(StateDir + "/attention.md")); err != nil || !strings.Contains(string(data), "autonomy runner update "+p.Ask+" --new-token") {
		t.Errorf("attention.md does not say how the operator gets the token: %v\n%s", err, data)
	}
	// A session in flight of the reviewer, which holds agent:update.
	start, err := proc.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	in := store.Session{Actor: "reviewer", Kind: "agent", Status: ir.Running, Origin: "operator",
		SupervisorPID: os.Getpid(), SupervisorStart: start, StartedAt: time.Now(), CreatedAt: time.Now()}
	if err := g.r.Store.Tx(ctx, func(tx *store.Tx) error { return tx.Insert(&in) }); err != nil {
		t.Fatal(err)
	}
	session := newRunner(t, dir, Options{Session: in.ID})
	var denied *DeniedError
	if _, err := session.NewAskToken(ctx, p.Ask); !errors.As(err, &denied) {
		t.Fatalf("a session took a new token for the ask: %v", err)
	}
	old, err := g.r.NewAskToken(ctx, p.Ask)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: old, Evidence: "trust me"}); !errors.As(err, &denied) || !strings.Contains(err.Error(), "only the operator") {
		t.Fatalf("a session resolved the code flow's ask with its token: %v", err)
	}
	token, err := g.r.NewAskToken(ctx, p.Ask)
	if err != nil || token == old {
		t.Fatalf("a second token: %q %v", token, err)
	}
	var refused *RefusedError
	if _, err := g.r.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: old, Evidence: "read it"}); !errors.As(err, &refused) {
		t.Fatalf("the token before the new one still redeems the ask: %v", err)
	} else if !strings.Contains(err.Error(), "printed by autonomy runner update "+p.Ask+" --new-token") {
		t.Errorf("a wrong token to the code flow's ask does not say how to get one: %v", err)
	}
	if _, err := g.r.Update(ctx, p.Ask, ir.Patch{Status: ir.Done, Token: token, Evidence: "read it"}); err != nil {
		t.Fatal(err)
	}
	if p, _, _ = g.r.Store.ProposalOf(ctx, p.Session); p.State != store.ProposalMerged {
		t.Fatalf("after the operator: %+v", p)
	}
	// No log of the installation holds a token.
	logs, _ := os.ReadDir(g.r.In.Path(StateDir + "/logs"))
	for _, e := range logs {
		if data, _ := os.ReadFile(g.r.In.Path(StateDir + "/logs/" + e.Name())); strings.Contains(string(data), "atk_") {
			t.Errorf("the log %s holds an ask's token", e.Name())
		}
	}
}

// An ask the code flow did not engage gets no new token: its token went to its launcher.
func TestNewAskTokenOnlyForTheCodeFlow(t *testing.T) {
	t.Parallel()
	g := newFlowRig(t)
	res, err := g.r.Launch(context.Background(), LaunchRequest{Actor: "maintainer"})
	if err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	if _, err := g.r.NewAskToken(context.Background(), res.Session.ID); !errors.As(err, &refused) {
		t.Fatalf("a new token for an ask of the operator's own: %v", err)
	}
}
