//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/substrates"
)

// The paths a maintainer must approve come from the installed policy; a policy damaged, edited
// or gone holds the merge, saying why, where it used to read no path and merge a change to a
// governing document on the model reviewer's approval alone (attack26). Put back, the flow goes
// on to the maintainer.
func TestAnUnreadablePolicyHoldsTheMergeForTheMaintainer(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(path string, was []byte){
		"not JSON": func(path string, was []byte) { os.WriteFile(path, append(append([]byte{}, was...), '}'), 0o644) },
		"edited": func(path string, was []byte) {
			os.WriteFile(path, []byte(strings.ReplaceAll(string(was), "docs/VISION.md", "docs/NOTHING.md")), 0o644)
		},
		"gone": func(path string, _ []byte) { os.Remove(path) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := newFlowRig(t)
			path := filepath.Join(g.dir, filepath.FromSlash(substrates.PolicyPath))
			was, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(was), "docs/VISION.md") {
				t.Fatalf("the installed policy names no governing document: %v\n%s", err, was)
			}
			damage(path, was)
			before := g.main()
			g.set("change", "docs/VISION.md\nno vision\n")
			g.set("verdict", "approve\n")
			s := launch(t, g.r, LaunchRequest{Actor: "develop", Ref: "42"})
			waitEnded(t, g.r, s.ID)
			p := g.held(s.ID)
			if p.State == store.ProposalMerged || g.main() != before || p.Ask != "" ||
				!strings.Contains(p.Reason, "not merged: the paths a maintainer must approve (.autonomy/policy.json) cannot be read") {
				t.Fatalf("with the policy %s: %s, ask %q: %s", name, p.State, p.Ask, p.Reason)
			}
			if err := os.WriteFile(path, was, 0o644); err != nil {
				t.Fatal(err)
			}
			g.r.advanceProposals(context.Background())
			if p = g.settled(s.ID); p.State == store.ProposalMerged || p.Ask == "" || !strings.Contains(p.Reason, "docs/VISION.md") {
				t.Fatalf("with the policy put back: %s, ask %q: %s", p.State, p.Ask, p.Reason)
			}
		})
	}
}

// held is the proposal of session once it is approved and held, or moved on.
func (g *flowRig) held(session string) store.Proposal {
	g.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, ok, err := g.r.Store.ProposalOf(context.Background(), session)
		if err != nil {
			g.t.Fatal(err)
		}
		if ok && (p.State == store.ProposalMerged || p.State == store.ProposalRefused || p.Ask != "" || strings.Contains(p.Reason, "not merged")) {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.t.Fatalf("the proposal of %s did not settle", session)
	return store.Proposal{}
}
