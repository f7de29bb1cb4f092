package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// ProbeTargets are the local substrate's two runners (substrates.Prober): the exec runner
// (agents as processes) and the human runner (asks parked for a person), each probed in a fresh
// installation of the probe fleet, supervised in this process. Timeouts count in seconds
// instead of minutes.
func (s Substrate) ProbeTargets(env substrates.ProbeEnv) ([]substrates.ProbeTarget, error) {
	return []substrates.ProbeTarget{
		{Name: "local exec", Substrate: Name, New: func(ctx context.Context) (*substrates.ProbeSubject, error) {
			return newProbeSubject(ctx, env, s.Playbooks, false)
		}},
		{Name: "local human", Substrate: Name, Human: true, New: func(ctx context.Context) (*substrates.ProbeSubject, error) {
			return newProbeSubject(ctx, env, s.Playbooks, true)
		}},
	}, nil
}

func newProbeSubject(ctx context.Context, env substrates.ProbeEnv, playbooks PlaybookHost, human bool) (sub *substrates.ProbeSubject, err error) {
	scratch, err := os.MkdirTemp("", "autonomy-conformance-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(scratch)
		}
	}()
	_, out, err := env.CompileFleet(scratch)
	if err != nil {
		return nil, err
	}
	inst := filepath.Join(scratch, "install")
	if err := os.MkdirAll(inst, 0o755); err != nil {
		return nil, err
	}
	// Isolated workspaces are git worktrees: the installation is a repository with a commit.
	gitErr := gitInit(ctx, inst)
	if _, err := substrates.Write(inst, &out, substrates.WriteOptions{}); err != nil {
		return nil, err
	}
	clock := &probeClock{}
	r, err := New(inst, Options{Minute: time.Second, Playbooks: playbooks, Now: clock.now})
	if err != nil {
		return nil, err
	}
	callers := &probeCallers{inst: inst, opts: Options{Minute: time.Second, Playbooks: playbooks, Now: clock.now}}
	root, err := filepath.EvalSymlinks(inst)
	if err != nil {
		r.Close()
		return nil, err
	}
	state := filepath.Join(root, ".autonomy", "state", "probe")
	s := &substrates.ProbeSubject{
		Runner:        r.Contract(),
		Actor:         "probe",
		Timeout:       "overtime",
		TimeoutWait:   30 * time.Second,
		MaxConcurrent: r.In.Runner.MaxConcurrent,
		Isolated:      "isolated",
		Seen:          func(ctx context.Context, id string) (map[string]string, error) { return probeSeen(state, id) },
		Fire: func(ctx context.Context, actor string, f substrates.Firing) (ir.Session, error) {
			run := r
			if f.Session != "" {
				var err error
				if run, err = callers.runner(f.Session); err != nil {
					return ir.Session{}, err
				}
			}
			res, err := run.Launch(ctx, LaunchRequest{Actor: actor, Params: f.Params, Ref: f.Ref, From: f.From, Text: f.Text, Kind: f.Kind})
			s := toContract(res.Session)
			s.Token = res.Token
			return s, err
		},
		AsSession: func(ctx context.Context, id string) (ir.Runner, error) {
			run, err := callers.runner(id)
			if err != nil {
				return nil, err
			}
			return run.Contract(), nil
		},
		Result:    "resulter",
		Proposer:  "proposer",
		Prelaunch: "prelauncher",
		Proposal: func(ctx context.Context, session string) (substrates.ProposalView, error) {
			return probeProposal(ctx, r, session)
		},
		TickAt: func(ctx context.Context, now time.Time) ([]ir.Session, error) {
			clock.set(now)
			rep, err := r.Tick(ctx)
			var fired []ir.Session
			for _, x := range rep.Fired {
				fired = append(fired, toContract(x))
			}
			return fired, err
		},
		Workspace: func(ctx context.Context, id string) (string, string, bool, error) {
			data, err := os.ReadFile(filepath.Join(state, "where-"+id))
			if errors.Is(err, os.ErrNotExist) {
				return "", root, false, nil
			}
			if err != nil {
				return "", root, false, err
			}
			ran := strings.TrimSpace(string(data))
			got, _, err := r.Get(ctx, id)
			if err != nil || !got.Status.Ended() {
				return ran, root, false, err
			}
			_, statErr := os.Stat(ran)
			return ran, root, errors.Is(statErr, os.ErrNotExist), nil
		},
		Close: func() {
			if ss, err := r.List(context.Background(), false); err == nil {
				for _, x := range ss {
					r.Cancel(context.Background(), x.ID)
				}
			}
			callers.close()
			r.Close()
			os.RemoveAll(scratch)
		},
	}
	if gitErr != nil {
		s.Isolated, s.NotProbed = "", fmt.Sprintf("isolated workspaces need git: %v", gitErr)
	}
	if human {
		s.Actor, s.Human = "asker", true
		s.Simulate = func(ctx context.Context, fixtures string) (func(context.Context) error, error) {
			path := filepath.Join(scratch, "humans.yml")
			if err := os.WriteFile(path, []byte(fixtures), 0o644); err != nil {
				return nil, err
			}
			fx, err := ParseFixtures(path)
			if err != nil {
				return nil, err
			}
			if err := r.SetHumans(ctx, fx); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { _, err := r.Tick(ctx); return err }, nil
		}
	}
	return s, nil
}

// probeSeen reads what the probe script reported of its environment for session id: every
// param it wrote (nil until it has).
func probeSeen(state, id string) (map[string]string, error) {
	dir := filepath.Join(state, id)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // not reported yet (the script renames its folder into place when done)
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		seen[e.Name()] = strings.TrimSuffix(string(data), "\n") // printenv adds one
	}
	return seen, nil
}

// probeProposal is what became of the proposal of session: its state, and the actor of the
// reviewer whose verdict decided it.
func probeProposal(ctx context.Context, r *Runner, session string) (substrates.ProposalView, error) {
	p, ok, err := r.Store.ProposalOf(ctx, session)
	if err != nil || !ok {
		return substrates.ProposalView{}, err
	}
	var v substrates.ProposalView
	switch {
	case p.State == store.ProposalMerged:
		v.State = "merged"
	case p.State == store.ProposalRefused:
		v.State = "refused"
	case p.Ask != "":
		v.State = "waiting"
	}
	if p.Reviewer != "" {
		rs, _, err := r.Store.Get(ctx, p.Reviewer)
		if err != nil {
			return v, err
		}
		v.By = rs.Actor
	}
	return v, nil
}

// probeClock is a probe subject's clock: the real one until a check sets it.
type probeClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *probeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return time.Now()
	}
	return c.at
}

func (c *probeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = t
}

// probeCallers are the runners a probe subject calls from inside its sessions, one per session,
// as a process of that session would (Options.Session); each supervises what it launches, so it
// stays open until the subject is closed.
type probeCallers struct {
	inst string
	opts Options
	mu   sync.Mutex
	open map[string]*Runner
}

func (c *probeCallers) runner(session string) (*Runner, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.open[session]; r != nil {
		return r, nil
	}
	opts := c.opts
	opts.Session = session
	r, err := New(c.inst, opts)
	if err != nil {
		return nil, err
	}
	if c.open == nil {
		c.open = map[string]*Runner{}
	}
	c.open[session] = r
	return r, nil
}

func (c *probeCallers) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.open {
		r.Close()
	}
}

// gitInit makes dir a git repository with one commit.
func gitInit(ctx context.Context, dir string) error {
	for _, args := range [][]string{
		{"init", "--quiet"},
		{"-c", "user.name=autonomy", "-c", "user.email=conformance@autonomy.invalid", "commit", "--quiet", "--allow-empty", "-m", "conformance probe"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// Realized checks that out, the compile of feature's probe profile, realizes the feature, reading
// the launcher config, schedule and runner config the way the runner does (substrates.Realizer).
func (Substrate) Realized(feature string, out substrates.Output) error {
	data, err := out.File(ActorPath("probe"))
	if err != nil {
		return err
	}
	var cfg ActorConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("the probe's launcher config: %v", err)
	}
	check := func(ok bool, format string, args ...any) error {
		if ok {
			return nil
		}
		return fmt.Errorf(format, args...)
	}
	name, arg, _ := strings.Cut(feature, ":")
	switch {
	case name == "capability" && arg == "@scope":
		return check(slices.Contains(cfg.Capabilities, "agent:launch@other"), "the launcher config does not carry agent:launch@other")
	case name == "capability":
		return check(slices.Contains(cfg.Capabilities, arg) && strings.Contains(cfg.Env["AUTONOMY_CAPABILITIES"], arg),
			"the launcher config does not carry %s to the runner and the agent", arg)
	case feature == "trigger:cron":
		var sch Schedule
		if data, err := out.File(SchedulePath); err != nil || json.Unmarshal(data, &sch) != nil {
			return fmt.Errorf("no readable schedule")
		}
		return check(slices.ContainsFunc(sch.Entries, func(e Entry) bool { return e.Actor == "probe" && e.Cron == "17 6 * * 1-5" }),
			"the schedule does not hold the cron as written")
	case feature == "trigger:event":
		return eventRealized(cfg, out)
	case feature == "trigger:dispatch":
		return check(slices.ContainsFunc(cfg.Triggers, func(t Trigger) bool { return t.Kind == "dispatch" && slices.Contains(t.Params, "PROBE_REF") }),
			"the launcher config has no dispatch trigger forwarding PROBE_REF")
	case name == "source":
		return check(slices.Contains(cfg.Params, Param{Name: "PROBE_PARAM", Source: arg}), "the launcher config does not resolve PROBE_PARAM from %s", arg)
	case feature == "kind:human":
		return check(cfg.Kind == "human" && cfg.Command == nil, "the probe is not a parked ask")
	case feature == "field:timeout":
		return check(cfg.TimeoutMinutes == 7, "timeout is %d minutes, not 7", cfg.TimeoutMinutes)
	case feature == "field:review":
		return check(cfg.Reviewer == "other" && cfg.Env["AUTONOMY_REVIEWER"] == "other", "the proposer is not handed its reviewer")
	case feature == "field:result":
		if cfg.Result == "" {
			return fmt.Errorf("the launcher config names no result schema")
		}
		_, err := out.File(cfg.Result)
		return err
	case feature == "field:execution":
		return check(cfg.Workspace == "isolated", "the workspace is %q, not isolated", cfg.Workspace)
	case feature == "field:prelaunch":
		return check(cfg.Prelaunch == "git fetch --quiet", "the launcher config does not run the prelaunch command")
	case feature == "policy:maxConcurrent":
		var rc RunnerConfig
		if data, err := out.File(RunnerPath); err != nil || json.Unmarshal(data, &rc) != nil {
			return fmt.Errorf("no readable runner config")
		}
		return check(rc.MaxConcurrent == 3, "the runner caps at %d, not 3", rc.MaxConcurrent)
	}
	return fmt.Errorf("no realization check for %s on local", feature)
}

// eventRealized checks the probe's event trigger is installed with its types, and the runner
// config holds the event source that fires it.
func eventRealized(cfg ActorConfig, out substrates.Output) error {
	var rc RunnerConfig
	if data, err := out.File(RunnerPath); err != nil || json.Unmarshal(data, &rc) != nil || rc.Events == nil {
		return fmt.Errorf("the runner config has no event source")
	}
	if !slices.ContainsFunc(cfg.Triggers, func(t Trigger) bool {
		return t.Kind == "event" && t.Event == "issues" && slices.Equal(t.Types, []string{"labeled"})
	}) {
		return fmt.Errorf("the launcher config does not carry the event trigger with its types")
	}
	return nil
}
