package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/conformance"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
)

// ghProcessGet is how conformance reads a GitHub session back: another autonomy process runs
// `autonomy runner --substrate gh-actions get ID --format json` as the operator, over the probe
// fleet's installation (for its manifest), so the params must come back from GitHub, not from
// the launcher's memory. Nil without a repository (the GitHub targets are then not run).
func ghProcessGet(repo string) conformance.Getter {
	if repo == "" {
		return nil
	}
	return func(ctx context.Context, id string) (ir.Session, bool, error) {
		exe, err := os.Executable()
		if err != nil {
			return ir.Session{}, false, err
		}
		dir, err := os.MkdirTemp("", "autonomy-probe-")
		if err != nil {
			return ir.Session{}, false, err
		}
		defer os.RemoveAll(dir)
		_, out, err := conformance.CompileProbeFleet(ghactions.Substrate{}, dir)
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
		cmd := exec.CommandContext(ctx, exe, "runner", "--substrate", ghactions.Name, "--dir", inst, "get", id, "--format", "json")
		// The operator's environment, with the repository named and no actor: not a job's.
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if k != ghactions.ActorEnv && k != "GITHUB_WORKFLOW_REF" && k != "GITHUB_REPOSITORY" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "GITHUB_REPOSITORY="+repo)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == exitProblems && strings.Contains(stderr.String(), "no session") {
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
