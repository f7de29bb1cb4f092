package ghactions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghexpr"
)

// installStep is the name of the step of a trusted job that builds autonomy: the player runs
// its own autonomy in its place.
const installStep = "Install autonomy"

// playedJob is a job of a compiled workflow as the player reads it.
type playedJob struct {
	If    string            `yaml:"if"`
	Env   map[string]string `yaml:"env"`
	Steps []struct {
		Name string            `yaml:"name"`
		If   string            `yaml:"if"`
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
		Env  map[string]string `yaml:"env"`
		Run  string            `yaml:"run"`
	} `yaml:"steps"`
}

// player plays GitHub's runner for the probe: it runs a job of a workflow of out as a runner
// does, every run: step with bash and the job's and step's env, each ${{ }} evaluated against
// the run's values, so what runs is exactly what the workflow declares. The pinned actions are
// played by their documented effect: checkout clones remote (the repository's git URL),
// upload-artifact and download-artifact keep and hand over a directory by the run's id and the
// artifact's name; the Install autonomy step is exe.
type player struct {
	out       substrates.Output
	remote    string
	exe       string
	base      []string
	scratch   string
	artifacts map[string]string // "RUN/name" → directory
}

// job plays job id of workflow file (its name under .github/workflows) for run, with values
// (the ${{ }} contexts). It reports false when the job's if: skips it, and what the job printed;
// a step that fails fails the job, with what it printed.
func (p *player) job(ctx context.Context, file, id, run string, values map[string]any) (string, bool, error) {
	path := ".github/workflows/" + file
	j, err := p.read(path, id)
	if err != nil {
		return "", false, err
	}
	temp, err := os.MkdirTemp(p.scratch, id+"-")
	if err != nil {
		return "", false, err
	}
	values["runner.temp"] = temp
	if ok, err := p.cond(j.If, values); err != nil || !ok {
		return "", false, wrapIf(err, path, "jobs."+id+".if")
	}
	ws := filepath.Join(temp, "workspace")
	githubEnv := filepath.Join(temp, "github_env")
	env := append(append([]string{}, p.base...), "RUNNER_TEMP="+temp, "GITHUB_WORKSPACE="+ws, "GITHUB_ENV="+githubEnv,
		"GITHUB_OUTPUT="+filepath.Join(temp, "github_output"), "GITHUB_STEP_SUMMARY="+filepath.Join(temp, "summary"), "GITHUB_RUN_ID="+run)
	for k, v := range map[string]string{"GITHUB_EVENT_NAME": "github.event_name", "GITHUB_SHA": "github.sha", "GITHUB_ACTOR": "github.actor"} {
		if s, ok := values[v].(string); ok && s != "" {
			env = append(env, k+"="+s)
		}
	}
	if env, err = evalEnv(env, j.Env, values, path, "jobs."+id+".env"); err != nil {
		return "", true, err
	}
	var log strings.Builder
	for i, st := range j.Steps {
		where := fmt.Sprintf("%s: jobs.%s.steps[%d] (%s)", path, id, i, st.Name)
		if ok, err := p.cond(st.If, values); err != nil || !ok {
			if err != nil {
				return log.String(), true, fmt.Errorf("%s.if: %v", where, err)
			}
			continue
		}
		with := map[string]string{}
		for k, v := range st.With {
			if with[k], err = ghexpr.Eval(v, values); err != nil {
				return log.String(), true, fmt.Errorf("%s.with.%s: %v", where, k, err)
			}
		}
		if st.Name == installStep {
			env = append(env, "AUTONOMY_BIN="+p.exe)
			continue
		}
		if st.Uses != "" {
			if err := p.action(ctx, st.Uses, with, ws, run); err != nil {
				return log.String(), true, fmt.Errorf("%s: %v", where, err)
			}
			continue
		}
		stepEnv, err := evalEnv(env, st.Env, values, where, "env")
		if err != nil {
			return log.String(), true, err
		}
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
		cmd.Dir, cmd.Env = ws, stepEnv
		if _, err := os.Stat(ws); err != nil {
			cmd.Dir = temp
		}
		got, err := cmd.CombinedOutput()
		log.Write(got)
		if err != nil {
			return log.String(), true, fmt.Errorf("%s: %v:\n%s", where, err, got)
		}
		if env, err = appendGitHubEnv(env, githubEnv); err != nil {
			return log.String(), true, err
		}
	}
	return log.String(), true, nil
}

// read parses job id of the workflow at path in p.out.
func (p *player) read(path, id string) (*playedJob, error) {
	data, err := p.out.File(path)
	if err != nil {
		return nil, err
	}
	var wf struct {
		Jobs map[string]playedJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	j, ok := wf.Jobs[id]
	if !ok {
		return nil, fmt.Errorf("%s has no job %s", path, id)
	}
	return &j, nil
}

// cond evaluates an if: as GitHub does: a bare expression, or one in ${{ }}; none is true.
func (p *player) cond(src string, values map[string]any) (bool, error) {
	src = strings.TrimSpace(src)
	if src == "" {
		return true, nil
	}
	if !strings.HasPrefix(src, "${{") {
		src = "${{ " + src + " }}"
	}
	got, err := ghexpr.Eval(src, values)
	return got == "true", err
}

func wrapIf(err error, path, key string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %v", path, key, err)
}

// action plays a pinned action by its documented effect.
func (p *player) action(ctx context.Context, uses string, with map[string]string, ws, run string) error {
	name, _, _ := strings.Cut(uses, "@")
	switch name {
	case "actions/checkout":
		ref := with["ref"]
		if ref == "" {
			ref = "HEAD"
		}
		for _, args := range [][]string{{"clone", "--quiet", "--", p.remote, ws}, {"-C", ws, "-c", "advice.detachedHead=false", "checkout", "--quiet", ref}} {
			if got, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("checkout: git %s: %v: %s", args[0], err, got)
			}
		}
		return nil
	case "actions/upload-artifact":
		p.artifacts[run+"/"+with["name"]] = with["path"]
		return nil
	case "actions/download-artifact":
		src, ok := p.artifacts[run+"/"+with["name"]]
		if !ok {
			return fmt.Errorf("run %s has no artifact %s", run, with["name"])
		}
		return os.CopyFS(with["path"], os.DirFS(src))
	}
	return fmt.Errorf("the probe cannot play %s", uses)
}

// evalEnv appends env's entries, each ${{ }} evaluated against values, to base.
func evalEnv(base []string, env map[string]string, values map[string]any, where, key string) ([]string, error) {
	out := append([]string{}, base...)
	for k, v := range env {
		got, err := ghexpr.Eval(v, values)
		if err != nil {
			return nil, fmt.Errorf("%s: %s.%s: %v", where, key, k, err)
		}
		out = append(out, k+"="+got)
	}
	return out, nil
}

// appendGitHubEnv appends what a step wrote to GITHUB_ENV (NAME=value lines) to env.
func appendGitHubEnv(env []string, path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return env, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, _, ok := strings.Cut(sc.Text(), "="); ok && k != "" {
			env = append(env, sc.Text())
		}
	}
	return env, sc.Err()
}
