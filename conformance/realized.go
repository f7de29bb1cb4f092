package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// Realized checks that out, the compile of feature's probe profile (Features), realizes the
// feature: it reads the generated files the way the substrate's runtime will, independently of
// what the substrate declares. It knows the substrates of the registry; another substrate's
// features cannot be verified, which is an error.
func Realized(substrate, feature string, out substrates.Output) error {
	switch substrate {
	case "gh-actions":
		return realizedGitHub(feature, out)
	case "local":
		return realizedLocal(feature, out)
	}
	return fmt.Errorf("the battery cannot read %s output: add its realization checks to conformance/realized.go", substrate)
}

func file(out substrates.Output, path string) ([]byte, error) {
	for _, f := range out.Files {
		if f.Path == path {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("%s was not generated", path)
}

// workflow is the part of a generated workflow the checks read.
type workflow struct {
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

func readWorkflow(out substrates.Output, actor string) (*workflow, error) {
	data, err := file(out, ".github/workflows/"+actor+".yml")
	if err != nil {
		return nil, err
	}
	var wf workflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		return nil, fmt.Errorf("%s.yml: %v", actor, err)
	}
	return &wf, nil
}

// anyJob reports whether some job of the probe's workflow satisfies ok.
func (wf *workflow) anyJob(what string, ok func(perms map[string]string, timeout int, env map[string]string, uses []string) bool) error {
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
func (wf *workflow) holdsGrant(capability string) error {
	want := ghactions.Grant(capability)
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

func realizedGitHub(feature string, out substrates.Output) error {
	wf, err := readWorkflow(out, "probe")
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

func realizedLocal(feature string, out substrates.Output) error {
	data, err := file(out, local.ActorPath("probe"))
	if err != nil {
		return err
	}
	var cfg local.ActorConfig
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
		var sch local.Schedule
		if data, err := file(out, local.SchedulePath); err != nil || json.Unmarshal(data, &sch) != nil {
			return fmt.Errorf("no readable schedule")
		}
		return check(slices.ContainsFunc(sch.Entries, func(e local.Entry) bool { return e.Actor == "probe" && e.Cron == "17 6 * * 1-5" }),
			"the schedule does not hold the cron as written")
	case feature == "trigger:dispatch":
		return check(slices.ContainsFunc(cfg.Triggers, func(t local.Trigger) bool { return t.Kind == "dispatch" && slices.Contains(t.Params, "PROBE_REF") }),
			"the launcher config has no dispatch trigger forwarding PROBE_REF")
	case name == "source":
		return check(slices.Contains(cfg.Params, local.Param{Name: "PROBE_PARAM", Source: arg}), "the launcher config does not resolve PROBE_PARAM from %s", arg)
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
		_, err := file(out, cfg.Result)
		return err
	case feature == "field:execution":
		return check(cfg.Workspace == "isolated", "the workspace is %q, not isolated", cfg.Workspace)
	case feature == "field:prelaunch":
		return check(cfg.Prelaunch == "git fetch --quiet", "the launcher config does not run the prelaunch command")
	case feature == "policy:maxConcurrent":
		var rc local.RunnerConfig
		if data, err := file(out, local.RunnerPath); err != nil || json.Unmarshal(data, &rc) != nil {
			return fmt.Errorf("no readable runner config")
		}
		return check(rc.MaxConcurrent == 3, "the runner caps at %d, not 3", rc.MaxConcurrent)
	}
	return fmt.Errorf("no realization check for %s on local", feature)
}
