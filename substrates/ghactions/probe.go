package ghactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// gitHubNotProbed says why the checks that watch a process or a clock cannot run on GitHub.
const gitHubNotProbed = "a GitHub job runs on GitHub's machines, fired by GitHub's own scheduler: its clock, process, workspace and timeout are not observable through the Runner contract (the support matrix verifies them from the compiled workflows)"

// ProbeTargets are the GitHub runner's targets, agent and human (substrates.Prober), against
// env.Remote (OWNER/NAME), which must hold the probe fleet's workflows on its default branch.
// Without it they are listed as not run. The get check reads a session back through another
// autonomy process when env.Exe is set, else through a new runner with nothing in memory.
func (Substrate) ProbeTargets(env substrates.ProbeEnv) ([]substrates.ProbeTarget, error) {
	repo := env.Remote
	skip := ""
	token := ghrun.TokenFromEnv()
	if repo == "" {
		skip = "not run: pass --repo OWNER/NAME, with a token in GITHUB_TOKEN or GH_TOKEN, to probe the GitHub runner against a repository holding the probe fleet (`go test ./conformance` probes it against a simulated GitHub API)"
	} else if token == "" {
		return nil, fmt.Errorf("--repo %s needs a token in GITHUB_TOKEN or GH_TOKEN (actions: write on the repository)", repo)
	}
	// GITHUB_API_URL is the API root GitHub Actions sets in every job; it names a GitHub
	// Enterprise Server, or a simulated API in tests. Unset: api.github.com.
	opts := ghrun.RunnerOptions{Repo: repo, Token: token, Actors: env.Actors, BaseURL: os.Getenv("GITHUB_API_URL")}
	fresh := processGet(env)
	return []substrates.ProbeTarget{
		{Name: "github", Substrate: Name, Remote: true, Skip: skip, New: func(ctx context.Context) (*substrates.ProbeSubject, error) {
			out, err := compiledFleet(env)
			if err != nil {
				return nil, err
			}
			s, err := ProbeSubject(opts, false, out)
			if err == nil && env.Exe != "" && s.Fire != nil {
				err = ProbeApply(s, opts, out, env.Exe, os.Getenv(JobTokenEnv))
			}
			if err == nil && env.Exe != "" {
				err = probeMergeFrom(s, opts, out, env.Exe) // probe_merge.go
			}
			return withFresh(s, err)(fresh)
		}},
		{Name: "github human", Substrate: Name, Remote: true, Human: true, Skip: skip, New: func(ctx context.Context) (*substrates.ProbeSubject, error) {
			return withFresh(ProbeSubject(opts, true, substrates.Output{}))(fresh)
		}},
	}, nil
}

// compiledFleet compiles the probe fleet for GitHub, in a scratch directory it removes.
func compiledFleet(env substrates.ProbeEnv) (substrates.Output, error) {
	dir, err := os.MkdirTemp("", "autonomy-probe-")
	if err != nil {
		return substrates.Output{}, err
	}
	defer os.RemoveAll(dir)
	_, out, err := env.CompileFleet(dir)
	return out, err
}

// withFresh sets a subject's GetFresh to fresh, when given.
func withFresh(s *substrates.ProbeSubject, err error) func(substrates.ProbeGetter) (*substrates.ProbeSubject, error) {
	return func(fresh substrates.ProbeGetter) (*substrates.ProbeSubject, error) {
		if s != nil && fresh != nil {
			s.GetFresh = fresh
		}
		return s, err
	}
}

// ProbeSubject is a GitHub runner under test; closing it cancels the runs it launched. Its get
// check reads sessions back through a second runner, which knows nothing of the launches. out is
// the probe fleet as compiled for GitHub (the workflows the repository holds): an agent's
// subject dispatches with a firing context and reads what its job's env holds for the run from
// them (param-sources).
func ProbeSubject(opts ghrun.RunnerOptions, human bool, out substrates.Output) (*substrates.ProbeSubject, error) {
	r, err := ghrun.NewRunner(opts)
	if err != nil {
		return nil, err
	}
	other, err := ghrun.NewRunner(opts)
	if err != nil {
		return nil, err
	}
	t := &probeTracking{Runner: r}
	s := &substrates.ProbeSubject{Runner: t, Actor: "probe", NotProbed: gitHubNotProbed, Close: t.cancelAll, GetFresh: other.Get}
	if human {
		s.Actor, s.Human = "asker", true
		return s, nil
	}
	login, err := other.Login(context.Background())
	if err != nil {
		s.NotProbed += "; the param-sources check needs who the token acts as: " + err.Error()
		return s, nil
	}
	withFiring(s, other, out, login)
	return s, nil
}

// probeTracking remembers the sessions launched through it, to cancel them when the check is done.
type probeTracking struct {
	ir.Runner
	mu  sync.Mutex
	ids []string
}

func (t *probeTracking) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	s, err := t.Runner.Launch(ctx, agent, params)
	if s.ID != "" {
		t.mu.Lock()
		t.ids = append(t.ids, s.ID)
		t.mu.Unlock()
	}
	return s, err
}

func (t *probeTracking) cancelAll() {
	t.mu.Lock()
	ids := t.ids
	t.mu.Unlock()
	for _, id := range ids {
		t.Runner.Cancel(context.Background(), id)
	}
}

// processGet is how conformance reads a GitHub session back: another autonomy process (env.Exe)
// runs `autonomy runner --target gh-actions get ID --format json` as the operator, over the
// probe fleet's installation (for its manifest), so the params must come back from GitHub, not
// from the launcher's memory. Nil without a repository (the GitHub targets are then not run) or
// a binary.
func processGet(env substrates.ProbeEnv) substrates.ProbeGetter {
	repo, exe := env.Remote, env.Exe
	if repo == "" || exe == "" {
		return nil
	}
	return func(ctx context.Context, id string) (ir.Session, bool, error) {
		dir, err := os.MkdirTemp("", "autonomy-probe-")
		if err != nil {
			return ir.Session{}, false, err
		}
		defer os.RemoveAll(dir)
		_, out, err := env.CompileFleet(dir)
		if err != nil {
			return ir.Session{}, false, err
		}
		inst := filepath.Join(dir, "install")
		if err := os.Mkdir(inst, 0o755); err != nil {
			return ir.Session{}, false, err
		}
		if _, err := substrates.Write(inst, &out, substrates.WriteOptions{}); err != nil {
			return ir.Session{}, false, err
		}
		cmd := exec.CommandContext(ctx, exe, "runner", "--target", Name, "--dir", inst, "get", id, "--format", "json")
		// The operator's environment, with the repository named and no actor: not a job's.
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if k != ActorEnv && k != "GITHUB_WORKFLOW_REF" && k != "GITHUB_REPOSITORY" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "GITHUB_REPOSITORY="+repo)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && // autonomy exits 1 on a refusal, as "no session"
			strings.Contains(stderr.String(), "no session") {
			return ir.Session{}, false, nil
		}
		if err != nil {
			return ir.Session{}, false, fmt.Errorf("autonomy runner get %s (another process): %v: %s", id, err, strings.TrimSpace(stderr.String()))
		}
		var s ir.Session
		if err := json.Unmarshal(data, &s); err != nil {
			return ir.Session{}, false, fmt.Errorf("autonomy runner get %s (another process) printed no session: %v", id, err)
		}
		return s, true, nil
	}
}

// probeWorkflow is the part of a generated workflow the checks read.
type probeWorkflow struct {
	On   map[string]yaml.Node `yaml:"on"`
	Jobs map[string]struct {
		Permissions map[string]string `yaml:"permissions"`
		Timeout     int               `yaml:"timeout-minutes"`
		Env         map[string]string `yaml:"env"`
		Steps       []struct {
			Uses string `yaml:"uses"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readProbeWorkflow(out substrates.Output, actor string) (*probeWorkflow, error) {
	data, err := out.File(".github/workflows/" + actor + ".yml")
	if err != nil {
		return nil, err
	}
	var wf probeWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, fmt.Errorf("%s.yml: %v", actor, err)
	}
	return &wf, nil
}

// anyJob reports whether some job of the probe's workflow satisfies ok.
func (wf *probeWorkflow) anyJob(what string, ok func(perms map[string]string, timeout int, env map[string]string, uses []string) bool) error {
	for _, j := range wf.Jobs {
		var uses []string
		for _, s := range j.Steps {
			uses = append(uses, s.Uses)
		}
		if ok(j.Permissions, j.Timeout, j.Env, uses) {
			return nil
		}
	}
	return fmt.Errorf("no job of probe.yml %s", what)
}

// holdsGrant checks that some job of the probe's workflow holds the token permissions of capability.
func (wf *probeWorkflow) holdsGrant(capability string) error {
	want := Grant(capability)
	if len(want) == 0 {
		return fmt.Errorf("GitHub has no token permission for %s", capability)
	}
	return wf.anyJob(fmt.Sprintf("holds %v", want), func(perms map[string]string, _ int, _ map[string]string, _ []string) bool {
		for scope, access := range want {
			if perms[scope] != string(access) {
				return false
			}
		}
		return true
	})
}

// Realized checks that out, the compile of feature's probe profile, realizes the feature,
// reading the probe's workflow the way GitHub does (substrates.Realizer).
func (Substrate) Realized(feature string, out substrates.Output) error {
	wf, err := readProbeWorkflow(out, "probe")
	if err != nil {
		return err
	}
	name, arg, _ := strings.Cut(feature, ":")
	switch {
	case name == "capability" && arg == "@scope":
		return wf.anyJob("carries the scope in AUTONOMY_CAPABILITIES", func(_ map[string]string, _ int, env map[string]string, _ []string) bool {
			return slices.Contains(strings.Fields(env["AUTONOMY_CAPABILITIES"]), "agent:launch@other")
		})
	case name == "capability":
		return wf.holdsGrant(arg)
	case feature == "trigger:cron":
		var crons []struct{ Cron string }
		if n, ok := wf.On["schedule"]; !ok || n.Decode(&crons) != nil || len(crons) != 1 || crons[0].Cron != "17 6 * * 1-5" {
			return fmt.Errorf("on.schedule does not hold the cron as written")
		}
		return nil
	case feature == "trigger:dispatch":
		var d struct{ Inputs map[string]yaml.Node }
		if n, ok := wf.On["workflow_dispatch"]; !ok || n.Decode(&d) != nil || d.Inputs["PROBE_REF"].Kind == 0 {
			return fmt.Errorf("on.workflow_dispatch has no input PROBE_REF")
		}
		return nil
	case feature == "trigger:event":
		if _, ok := wf.On["issues"]; !ok {
			return fmt.Errorf("on has no issues event")
		}
		return nil
	case name == "source":
		return wf.anyJob("resolves PROBE_PARAM into its env", func(_ map[string]string, _ int, env map[string]string, _ []string) bool {
			return strings.Contains(env["PROBE_PARAM"], "${{")
		})
	case feature == "kind:human":
		if _, ok := wf.On["workflow_dispatch"]; !ok {
			return fmt.Errorf("the person's workflow is not dispatchable, so nobody can engage them")
		}
		return nil
	case feature == "field:timeout":
		return wf.anyJob("has timeout-minutes: 7", func(_ map[string]string, timeout int, _ map[string]string, _ []string) bool { return timeout == 7 })
	case feature == "field:review":
		return wf.anyJob("names its reviewer's workflow", func(_ map[string]string, _ int, env map[string]string, _ []string) bool {
			return env["AUTONOMY_REVIEWER_WORKFLOW"] == "other.yml"
		})
	case feature == "field:result":
		for _, f := range out.Files {
			if strings.HasPrefix(f.Path, ".autonomy/results/") && json.Valid(f.Data) {
				return nil
			}
		}
		return fmt.Errorf("no result contract under .autonomy/results")
	case feature == "field:execution":
		return wf.anyJob("checks out the repository afresh", func(_ map[string]string, _ int, _ map[string]string, uses []string) bool {
			return slices.ContainsFunc(uses, func(u string) bool { return strings.HasPrefix(u, "actions/checkout@") })
		})
	}
	return fmt.Errorf("no realization check for %s on gh-actions", feature)
}
