package ghactions

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// The probe fleet's proposer and its reviewer (conformance/probe).
const (
	probeProposer = "proposer"
	probeReviewer = "reviewer"
)

// proposedRe finds the pull request autonomy gh propose opened or updated in its log.
var proposedRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(?:opened|updated) #(\d+) from ` + regexp.QuoteMeta(effect.BranchPrefix))
})

// ProbeMerge makes the merge-boundary check observable on s: a launch of the probe fleet's
// proposer dispatches its workflow, and the subject then plays GitHub's runner for that run and
// the runs it starts (player): the proposer's agent job (its script commits the change, its
// export step bundles it), its trusted propose job (autonomy gh propose, exe: pushes the branch
// to remote, the repository's git URL, opens the pull request, arms auto-merge, dispatches the
// human gate and the reviewer), the control workflow's human-gate job on that pull request, and
// the reviewer's run (its script reviews the pull request's head; its trusted review job,
// autonomy gh review, posts agent-review on the head its verdict names). The run concludes as
// its jobs did. What became of the change is read back from the API: the pull request, the
// statuses of its head and the protection of its base branch, as GitHub's auto-merge reads them.
func ProbeMerge(s *substrates.ProbeSubject, opts ghrun.RunnerOptions, out substrates.Output, exe, remote string) error {
	facts, err := ghrun.NewRunner(opts)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "autonomy-merge-")
	if err != nil {
		return err
	}
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + scratch, "GITHUB_ACTIONS=true", "CI=true", "RUNNER_OS=Linux",
		"GITHUB_REPOSITORY=" + opts.Repo, "GITHUB_SERVER_URL=https://github.com", "AUTONOMY_REMOTE=" + remote,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	if opts.BaseURL != "" {
		base = append(base, "GITHUB_API_URL="+strings.TrimSuffix(opts.BaseURL, "/"))
	}
	m := &merger{opts: opts, facts: facts, played: map[string]played{},
		p: &player{out: out, remote: remote, exe: exe, base: base, scratch: scratch, artifacts: map[string]string{}}}
	s.Runner = &proposing{Runner: s.Runner, m: m}
	s.Proposer, s.Proposal = probeProposer, m.proposal
	closeFn := s.Close
	s.Close = func() {
		if closeFn != nil {
			closeFn()
		}
		os.RemoveAll(scratch)
	}
	return nil
}

// mergeNotProbed says why the merge-boundary check is not probed without the repository's git URL.
const mergeNotProbed = "the merge-boundary check plays the proposer's and the reviewer's runs, which push to the repository: set AUTONOMY_REMOTE to its git URL (one git can push to) to probe it"

// probeMergeFrom sets up ProbeMerge on s when AUTONOMY_REMOTE names the repository's git URL
// (the variable the trusted jobs push to), else says why the check is not probed.
func probeMergeFrom(s *substrates.ProbeSubject, opts ghrun.RunnerOptions, out substrates.Output, exe string) error {
	remote := os.Getenv("AUTONOMY_REMOTE")
	if remote == "" {
		s.MergeNotProbed = mergeNotProbed
		return nil
	}
	return ProbeMerge(s, opts, out, exe, remote)
}

// merger plays the runs of the proposer's sessions and reads back what became of their changes.
type merger struct {
	opts  ghrun.RunnerOptions
	facts *ghrun.Runner
	p     *player
	mu    sync.Mutex
	// played are the proposer's sessions whose runs were played: the pull request each opened or
	// updated, or why the run failed.
	played map[string]played
}

type played struct {
	pr  int
	err error
}

// proposing is a runner whose launch of the proposer plays its run (merger.play), and whose get
// reports a played run as its jobs concluded.
type proposing struct {
	ir.Runner
	m *merger
}

func (r *proposing) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	if agent != probeProposer {
		return r.Runner.Launch(ctx, agent, params)
	}
	// On GitHub a proposal answers a work item (its number names the branch): the change's
	// path is the title of a work item opened for it.
	n, err := r.m.facts.OpenWorkItem(ctx, params["PROBE_REF"], "A change the conformance probe's proposer proposes.")
	if err != nil {
		return ir.Session{}, fmt.Errorf("%w: %v", substrates.ErrNotTried, err)
	}
	params = maps.Clone(params)
	params["PROBE_REF"] = strconv.Itoa(n)
	s, err := r.Runner.Launch(ctx, agent, params)
	if err != nil {
		return s, err
	}
	pr, perr := r.m.play(ctx, s.ID)
	r.m.mu.Lock()
	r.m.played[s.ID] = played{pr, perr}
	r.m.mu.Unlock()
	if perr != nil {
		return s, fmt.Errorf("session %s's run, played as GitHub's runner would: %w", s.ID, perr)
	}
	return s, nil
}

func (r *proposing) Get(ctx context.Context, id string) (ir.Session, bool, error) {
	s, ok, err := r.Runner.Get(ctx, id)
	r.m.mu.Lock()
	p, isPlayed := r.m.played[id]
	r.m.mu.Unlock()
	if ok && err == nil && isPlayed && !s.Status.Ended() {
		// GitHub's runner, which the subject plays, concludes the run as its jobs ended.
		s.Status = ir.Done
		if p.err != nil {
			s.Status = ir.Failed
		}
	}
	return s, ok, err
}

// play plays run id of the proposer, the human gate its propose job dispatched and its
// reviewer's run; it returns the pull request the propose job opened or updated.
func (m *merger) play(ctx context.Context, id string) (int, error) {
	run, ok, err := m.facts.Facts(ctx, id)
	if err != nil || !ok {
		return 0, cmp.Or(err, fmt.Errorf("run %s of %s is not found", id, probeProposer))
	}
	values, err := m.values(ctx, id, run.Actor, run.Inputs)
	if err != nil {
		return 0, err
	}
	file := probeProposer + ".yml"
	if _, _, err := m.p.job(ctx, file, "agent", id, values); err != nil {
		return 0, err
	}
	before, err := m.facts.List(ctx)
	if err != nil {
		return 0, err
	}
	log, ran, err := m.p.job(ctx, file, "propose", id, values)
	if err != nil || !ran {
		return 0, cmp.Or(err, fmt.Errorf("%s: jobs.propose was skipped", file))
	}
	found := proposedRe().FindStringSubmatch(log)
	if found == nil {
		return 0, fmt.Errorf("%s: jobs.propose opened no pull request:\n%s", file, log)
	}
	pr, _ := strconv.Atoi(found[1])
	if err := m.gate(ctx, pr, values); err != nil {
		return pr, err
	}
	if err := m.passCI(ctx, pr); err != nil {
		return pr, err
	}
	return pr, m.review(ctx, before, pr)
}

// passCI posts success on pull request pr's head for every status check its base's protection
// requires that no job of the fleet posts (policy.box.gh-actions.requiredChecks, ci by
// default): the repository's own CI, which the probe's repository does not run, passes.
func (m *merger) passCI(ctx context.Context, pr int) error {
	pull, err := m.facts.Pull(ctx, pr)
	if err != nil {
		return err
	}
	for _, c := range pull.Required {
		if c != effect.StatusContext && c != effect.HumanApprovalContext {
			if err := m.facts.PostStatus(ctx, pull.Head, c, "success", "the conformance probe's stand-in for the repository's CI"); err != nil {
				return err
			}
		}
	}
	return nil
}

// values are the ${{ }} contexts of a workflow_dispatch run id on the default branch, by actor
// with inputs.
func (m *merger) values(ctx context.Context, id, actor string, inputs ir.LaunchParams) (map[string]any, error) {
	got, err := exec.CommandContext(ctx, "git", "ls-remote", "--symref", "--", m.p.remote, "HEAD").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-remote %s: %v", m.p.remote, err)
	}
	head, def := "", ""
	for _, line := range strings.Split(string(got), "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			def, _, _ = strings.Cut(ref, "\t")
		} else if sha, ok := strings.CutSuffix(line, "\tHEAD"); ok {
			head = sha
		}
	}
	owner, _, _ := strings.Cut(m.opts.Repo, "/")
	values := map[string]any{"github.token": m.opts.Token, "github.actor": actor, "github.event_name": "workflow_dispatch",
		"github.repository_owner": owner, "github.run_id": id, "github.sha": head, "github.ref": "refs/heads/" + def,
		"github.event.repository.default_branch": def}
	for k, v := range inputs {
		values["inputs."+k] = v
	}
	return values, nil
}

// gate plays the control workflow's human-gate job on pull request pr, as the propose job
// dispatched it.
func (m *merger) gate(ctx context.Context, pr int, proposer map[string]any) error {
	id, err := m.facts.LatestDispatch(ctx, effect.ControlWorkflow)
	if err != nil {
		return err
	}
	values, err := m.values(ctx, id, fmt.Sprint(proposer["github.actor"]), ir.LaunchParams{effect.GateInput: strconv.Itoa(pr)})
	if err != nil {
		return err
	}
	_, ran, err := m.p.job(ctx, effect.ControlWorkflow, "human-gate", id, values)
	if err == nil && !ran {
		err = fmt.Errorf("%s: jobs.human-gate was skipped on its dispatch", effect.ControlWorkflow)
	}
	return err
}

// review plays the reviewer's run the propose job dispatched (one not in before) on pull
// request pr: its agent job, then its trusted review job.
func (m *merger) review(ctx context.Context, before []ir.Session, pr int) error {
	sess, err := newSession(ctx, m.facts, m.opts, before, probeReviewer)
	if err != nil {
		return fmt.Errorf("the propose job dispatched no run of %s: %v", probeReviewer, err)
	}
	run, _, err := m.facts.Facts(ctx, sess.ID)
	if err != nil {
		return err
	}
	// The propose job dispatches the reviewer with the pull request as its ref input.
	env, err := jobEnv(m.p.out, probeProposer, "propose", map[string]any{})
	if err != nil {
		return err
	}
	values, err := m.values(ctx, sess.ID, run.Actor, ir.LaunchParams{env["AUTONOMY_REVIEWER_REF_INPUT"]: strconv.Itoa(pr)})
	if err != nil {
		return err
	}
	file := probeReviewer + ".yml"
	if _, _, err := m.p.job(ctx, file, "agent", sess.ID, values); err != nil {
		return err
	}
	_, _, err = m.p.job(ctx, file, "review", sess.ID, values)
	return err
}

// newSession waits for a session of actor not in before, as the runner looks for a run it
// dispatched (RunnerOptions.PollInterval, FindTimeout).
func newSession(ctx context.Context, facts *ghrun.Runner, opts ghrun.RunnerOptions, before []ir.Session, actor string) (ir.Session, error) {
	poll, limit := cmp.Or(opts.PollInterval, 2*time.Second), cmp.Or(opts.FindTimeout, 2*time.Minute)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		after, err := facts.List(ctx)
		if err != nil {
			return ir.Session{}, err
		}
		for _, x := range after {
			if x.Agent == actor && !containsSession(before, x.ID) {
				return x, nil
			}
		}
		select {
		case <-ctx.Done():
			return ir.Session{}, fmt.Errorf("no session of %s started within %s", actor, limit)
		case <-time.After(poll):
		}
	}
}

// proposal reads what became of the change session proposed: merged once GitHub merged it, or
// once auto-merge is armed and every status check its base's protection requires is success on
// its head (auto-merge then merges it); refused when the reviewer's agent-review failed it; waiting when the
// reviewer approved it but another required check (the human gate) is not success; "" before.
// By is the actor of the run that posted the head's agent-review (its target URL).
func (m *merger) proposal(ctx context.Context, session string) (substrates.ProposalView, error) {
	m.mu.Lock()
	p, ok := m.played[session]
	m.mu.Unlock()
	if !ok {
		return substrates.ProposalView{}, fmt.Errorf("session %s proposed nothing the probe played", session)
	}
	if p.err != nil {
		return substrates.ProposalView{}, p.err
	}
	pull, err := m.facts.Pull(ctx, p.pr)
	if err != nil {
		return substrates.ProposalView{}, err
	}
	view := substrates.ProposalView{}
	if url := pull.URLs[effect.StatusContext]; url != "" {
		if run, ok, err := m.facts.Get(ctx, url[strings.LastIndex(url, "/")+1:]); err == nil && ok {
			view.By = run.Agent
		}
	}
	view.State = pullState(pull)
	if view.State != "" {
		view.How = pullHow(p.pr, pull, view.By)
	}
	return view, nil
}

// pullState is what GitHub's auto-merge makes of pull: "" before the reviewer's agent-review,
// refused when it failed the head, merged once auto-merge is armed and every required check is
// success, else waiting.
func pullState(pull ghrun.PullState) string {
	if pull.Merged {
		return "merged"
	}
	switch pull.States[effect.StatusContext] {
	case "", "pending":
		return ""
	case "failure", "error":
		return "refused"
	}
	if !pull.AutoMerge {
		return "waiting"
	}
	for _, c := range pull.Required {
		if pull.States[c] != "success" {
			return "waiting"
		}
	}
	return "merged"
}

// pullHow says what GitHub shows of pull request n: its head's required statuses, who posted
// agent-review, and whether auto-merge is armed.
func pullHow(n int, pull ghrun.PullState, by string) string {
	var states []string
	for _, c := range pull.Required {
		states = append(states, c+" "+cmp.Or(pull.States[c], "absent"))
	}
	armed := "armed"
	if !pull.AutoMerge {
		armed = "not armed"
	}
	head := pull.Head
	if len(head) > 12 {
		head = head[:12]
	}
	merged := "open"
	if pull.Merged {
		merged = "merged by " + pull.MergedBy
	}
	return fmt.Sprintf("pull request #%d %s, head %s: %s (the base's required checks; %s posted by %s's review job), auto-merge %s", n, merged, head, strings.Join(states, ", "), effect.StatusContext, cmp.Or(by, "nobody"), armed)
}
