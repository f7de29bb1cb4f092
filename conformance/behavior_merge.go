package conformance

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// checkMerge proposes three changes through the subject's proposer: one its reviewer approves
// merges, by the reviewer's verdict and never the proposer's; one it rejects is refused; one to a
// human-required path it approves waits for a person and is not merged.
func checkMerge(ctx context.Context, s *Subject) (Outcome, string, string) {
	if s.Proposer == "" || s.Proposal == nil {
		return NotProbed, cmp.Or(s.MergeNotProbed, s.NotProbed), ""
	}
	cases := []struct {
		path, verdict, want string
	}{{"plain", "approve", "merged"}, {"plain", "reject", "refused"}, {"human", "approve", "waiting"}}
	var by string
	var how []string
	for _, c := range cases {
		got, err := propose(ctx, s, c.path, c.verdict)
		if err != nil {
			return Fail, err.Error(), ""
		}
		if got.State != c.want {
			return Fail, fmt.Sprintf("a change to a %s path its reviewer answered %s is %q, want %s", c.path, c.verdict, got.State, c.want), ""
		}
		if got.How != "" {
			how = append(how, fmt.Sprintf("%s (%s): %s", c.path, c.verdict, got.How))
		}
		if c.want == "merged" {
			if got.By == "" || got.By == s.Proposer {
				return Fail, fmt.Sprintf("the change merged on the verdict of %q, not of its reviewer", got.By), ""
			}
			by = got.By
		}
		if c.want == "waiting" {
			// Time passing merges nothing: only a person's verified act does.
			time.Sleep(300 * time.Millisecond)
			if again, err := s.Proposal(ctx, got.session); err != nil || again.State != "waiting" {
				return Fail, fmt.Sprintf("the change to a human-required path did not keep waiting: %q (%v)", again.State, err), ""
			}
		}
	}
	observed := fmt.Sprintf("%s's change merged only on the approval of its reviewer %s; the change the reviewer rejected was refused; the approved change to a human-required path waited for a person, unmerged", s.Proposer, by)
	if len(how) > 0 {
		observed += "; seen: " + strings.Join(how, "; ")
	}
	return Supported, "", observed
}

type proposed struct {
	substrates.ProposalView
	session string
}

// propose launches the proposer on path with the reviewer's verdict, waits for its session to end
// done, and for its proposal to be decided.
func propose(ctx context.Context, s *Subject, path, verdict string) (proposed, error) {
	params := maps.Clone(Params)
	params["PROBE_REF"], params["PROBE_TEXT"] = path, verdict
	sess, err := s.Runner.Launch(ctx, s.Proposer, params)
	if err != nil {
		return proposed{}, fmt.Errorf("launch %s: %w", s.Proposer, err)
	}
	var last ir.Session
	err = eventually(ctx, time.Minute, func() (bool, error) {
		var err error
		last, _, err = s.Runner.Get(ctx, sess.ID)
		return last.Status.Ended(), err
	})
	if err == nil && last.Status != ir.Done {
		err = fmt.Errorf("ended %s", last.Status)
	}
	if err != nil {
		return proposed{}, fmt.Errorf("the proposer's session %s: %v", sess.ID, err)
	}
	p := proposed{session: sess.ID}
	err = eventually(ctx, time.Minute, func() (bool, error) {
		var err error
		p.ProposalView, err = s.Proposal(ctx, sess.ID)
		return p.State != "", err
	})
	if err != nil {
		return p, fmt.Errorf("the change to a %s path (%s) was never decided: %v", path, verdict, err)
	}
	return p, nil
}
