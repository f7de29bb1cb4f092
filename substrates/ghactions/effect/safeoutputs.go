package effect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// MCPSession is what autonomy gh mcp serves: the session, its reads and its safe-output file.
type MCPSession struct {
	Session mcpserver.Session
	Reads   Reads
	Outputs *tools.Outputs
}

// MCPSessionFromEnv reads a model job's MCP session from the agent step's environment: the
// actor (AUTONOMY_ACTOR) and its grants and caps as installed at GITHUB_SHA in the checkout
// GITHUB_WORKSPACE, the session (GITHUB_RUN_ID), the safe-output file (AUTONOMY_OUTPUTS), and
// what FromEnv reads for the reads (GH_TOKEN, the job's read-only token).
func MCPSessionFromEnv(ctx context.Context, getenv func(string) string) (*MCPSession, error) {
	e, err := FromEnv(getenv, os.Stderr)
	if err != nil {
		return nil, err
	}
	m, pol, a, err := installedActor(ctx, getenv)
	if err != nil {
		return nil, err
	}
	e.Policy = pol
	if e.RunID == "" {
		return nil, fmt.Errorf("GITHUB_RUN_ID is not set: it is the session the effects are recorded for")
	}
	path := getenv("AUTONOMY_OUTPUTS")
	if path == "" {
		return nil, fmt.Errorf("AUTONOMY_OUTPUTS is not set: it names the safe-output file")
	}
	out, err := tools.CreateOutputs(path)
	if err != nil {
		return nil, fmt.Errorf("safe outputs: %v", err)
	}
	return &MCPSession{
		Session: mcpserver.Session{ID: e.RunID, Actor: a.Name, Grants: grants(a), Max: pol.Box.GHActions.Tools.Max},
		Reads:   Reads{Env: e, Installed: m, Actor: a.Name},
		Outputs: out,
	}, nil
}

// installedActor reads the installation at GITHUB_SHA in the checkout GITHUB_WORKSPACE, and in
// it the actor AUTONOMY_ACTOR.
func installedActor(ctx context.Context, getenv func(string) string) (*Installed, Policy, InstalledActor, error) {
	dir := getenv("GITHUB_WORKSPACE")
	if dir == "" {
		dir = "."
	}
	m, pol, err := ReadInstallation(ctx, dir, getenv("GITHUB_SHA"))
	if err != nil {
		return nil, pol, InstalledActor{}, err
	}
	a, ok := m.Actor(getenv("AUTONOMY_ACTOR"))
	if !ok {
		return nil, pol, a, fmt.Errorf("AUTONOMY_ACTOR %q is not an actor of the installation at %s", getenv("AUTONOMY_ACTOR"), getenv("GITHUB_SHA"))
	}
	return m, pol, a, nil
}

// ApplyFile is autonomy gh apply: it reads the installation at sha in e.Dir and the safe-output
// file at path, and applies its effects for e.Actor's run e.RunID under the policy's caps,
// staged when the policy says so. An unreadable file or installation is an error; a refused
// effect is not.
func ApplyFile(ctx context.Context, e *Env, sha, path string) ([]Applied, bool, error) {
	m, pol, err := ReadInstallation(ctx, e.Dir, sha)
	if err != nil {
		return nil, false, err
	}
	e.Policy = pol
	staged := pol.Box.GHActions.Tools.Staged
	f, err := os.Open(path)
	if err != nil {
		return nil, staged, fmt.Errorf("the safe-output artifact: %v", err)
	}
	defer f.Close()
	if e.RunID == "" {
		return nil, staged, fmt.Errorf("GITHUB_RUN_ID is not set: it is the session whose effects are applied")
	}
	out, err := e.Apply(ctx, ApplyOptions{Outputs: f, Installed: m, Actor: e.Actor, Session: e.RunID,
		Max: pol.Box.GHActions.Tools.Max, Staged: staged})
	if err != nil {
		return out, staged, err
	}
	a, _ := m.Actor(e.Actor) // Apply refused an actor not installed
	contract, err := InstalledContract(ctx, e.Dir, sha, a)
	if err != nil {
		return out, staged, err
	}
	return out, staged, VerifyResult(contract, out, filepath.Join(filepath.Dir(path), ResultFile))
}

// ResultFile is the session's result file the agent job exports beside its safe outputs.
const ResultFile = "result.json"
