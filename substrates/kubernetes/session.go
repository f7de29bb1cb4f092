package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/bounded"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/ir"
)

// The in-pod session entry point: what SessionArgs runs in a session's container. It reads the
// session from the env its PodTemplate and Job set (EnvSession, EnvActor, EnvParams, EnvDir,
// EnvTermination), the actor from the fleet config mounted at EnvDir, runs the actor's behavior
// (a script here; a skill's agent CLI in session_agent.go) with the sessions' allowlisted
// environment (internal/sessionenv) and no credential, checks the
// result it wrote at $AUTONOMY_RESULT against the actor's result contract, and writes it to the
// termination message file, where the kubelet copies it into the pod's status for the runner
// (runner_result.go). When the result is missing, invalid or too long, or the behavior fails, it
// writes the reason there instead and exits non-zero: the pod fails, and the session with it.

// sessionCall is one run of the entry point.
type sessionCall struct {
	env            []string
	stdout, stderr io.Writer
	dir, term      string
	id, actor      string
}

// RunSession runs the session of the pod whose environment is env (os.Environ() in a session's
// container), the behavior's output going to stdout and stderr (the pod's log). A nil error
// means the result is in the termination message file; otherwise the reason is there too, when
// the file could be written at all.
func RunSession(ctx context.Context, env []string, stdout, stderr io.Writer) error {
	c := &sessionCall{env: env, stdout: stdout, stderr: stderr}
	for _, v := range []struct {
		to   *string
		name string
	}{{&c.dir, EnvDir}, {&c.term, EnvTermination}, {&c.id, EnvSession}, {&c.actor, EnvActor}} {
		*v.to = sessionenv.Lookup(env, v.name)
		if *v.to == "" {
			return exitcode.Usagef("runner session: $%s is not set: this verb is the entry point of a session's container, whose PodTemplate sets it (docs/kubernetes.md)", v.name)
		}
	}
	result, err := c.run(ctx)
	if err != nil {
		msg := "autonomy session " + c.id + ": " + err.Error()
		if werr := writeTermination(c.term, clipMessage(msg)); werr != nil {
			return exitcode.Problemf("%s (and the termination message file: %v)", msg, werr)
		}
		return exitcode.Problemf("%s", msg)
	}
	if err := writeTermination(c.term, result); err != nil {
		return exitcode.Problemf("session %s: cannot write its result to the termination message file: %v", c.id, err)
	}
	return nil
}

// run runs the behavior and returns its checked result.
func (c *sessionCall) run(ctx context.Context) ([]byte, error) {
	cfg, err := c.actorConfig()
	if err != nil {
		return nil, err
	}
	var params map[string]string
	if err := json.Unmarshal([]byte(sessionenv.Lookup(c.env, EnvParams)), &params); err != nil {
		return nil, fmt.Errorf("$%s is not a JSON object of strings: %v", EnvParams, err)
	}
	if err := c.checkParams(cfg, params); err != nil {
		return nil, err
	}
	if cfg.Agent != nil {
		return c.runAgent(ctx, cfg, params) // a skill (session_agent.go)
	}
	if cfg.Script == nil {
		return nil, fmt.Errorf("actor %q: its behavior %s is a playbook, which the kubernetes session entry point does not run; it runs scripts and skills (docs/kubernetes.md)", cfg.Actor, cfg.Behavior)
	}
	argv, err := cfg.Script.Argv(filepath.Join(c.dir, filepath.FromSlash(cfg.Behavior)), exec.LookPath, sessionenv.NodeVersion)
	if err != nil {
		return nil, fmt.Errorf("actor %q cannot run its behavior %s: %v", cfg.Actor, cfg.Behavior, err)
	}
	work, err := os.MkdirTemp("", "autonomy-session-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	workspace, resultPath := filepath.Join(work, "workspace"), filepath.Join(work, "result.json")
	if err := os.Mkdir(workspace, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = workspace, c.stdout, c.stderr
	cmd.Env = c.behaviorEnv(cfg, params, workspace, resultPath)
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("its behavior %s failed: %v", cfg.Behavior, err)
	}
	return c.result(cfg, resultPath)
}

// actorConfig reads the fleet config mounted at EnvDir and finds the session's actor in it.
func (c *sessionCall) actorConfig() (*ActorConfig, error) {
	data, err := bounded.ReadFile(filepath.Join(c.dir, FleetConfigKey), maxInstallBytes)
	if err != nil {
		return nil, fmt.Errorf("the fleet config: %v (is the installation mounted at $%s?)", err, EnvDir)
	}
	var fc FleetConfig
	if err := json.Unmarshal(data, &fc); err != nil {
		return nil, fmt.Errorf("the fleet config %s: %v (apply the compiled kustomization again)", filepath.Join(c.dir, FleetConfigKey), err)
	}
	i := slices.IndexFunc(fc.Actors, func(a ActorConfig) bool { return a.Actor == c.actor })
	if i < 0 || fc.Actors[i].Kind != "agent" {
		return nil, fmt.Errorf("$%s=%q is no agent of the fleet", EnvActor, c.actor)
	}
	return &fc.Actors[i], nil
}

// checkParams refuses, before anything runs, a forwarded param the runner would not have set: a
// name ir.IsReservedEnv reserves (ReservedParam), one the actor declares not (the fleet config's
// triggers), or one the container's env does not carry with the same value (the entries the
// admission policy vetted; $AUTONOMY_FORWARD alone is no source of names); and a declared param
// the container's env carries that $AUTONOMY_FORWARD leaves out (so a Job cannot drop the params
// the policy checks, such as who fired it, from what the session reads).
func (c *sessionCall) checkParams(cfg *ActorConfig, params map[string]string) error {
	declared := declaredParams(cfg.Triggers)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if why := ReservedParam(k); why != "" {
			return fmt.Errorf("param %q is reserved: %s; the session runs nothing (launch it with another param name)", k, why)
		}
		if !slices.Contains(declared, k) {
			return fmt.Errorf("%s; the session runs nothing", undeclaredParam(cfg.Actor, k, declared))
		}
		if !slices.Contains(c.env, k+"="+params[k]) {
			return fmt.Errorf("param %q of $%s is not the container's env entry %s: the session runs nothing (launch it through the runner, which sets both)", k, EnvParams, k)
		}
	}
	for _, k := range declared {
		if _, set := params[k]; !set && slices.ContainsFunc(c.env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") }) {
			return fmt.Errorf("the container's env entry %s (a param) is not in $%s: the session runs nothing (launch it through the runner, which sets both)", k, EnvParams)
		}
	}
	return nil
}

// behaviorEnv is the behavior's environment, the local runner's contract: the allowlisted part
// of the pod's (and the in-cluster API address, for a session whose capabilities reach the
// API), then the params verbatim, then the session's own.
func (c *sessionCall) behaviorEnv(cfg *ActorConfig, params map[string]string, workspace, resultPath string) []string {
	var env []string
	for _, kv := range c.env {
		k, _, _ := strings.Cut(kv, "=")
		_, param := params[k]
		if !param && (sessionenv.Allowed(k) || k == "KUBERNETES_SERVICE_HOST" || k == "KUBERNETES_SERVICE_PORT") {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		env = append(env, k+"="+params[k])
	}
	for _, k := range []string{EnvSession, EnvActor, EnvParams, EnvRef, EnvDir, "AUTONOMY_CAPABILITIES", "AUTONOMY_BEHAVIOR", "AUTONOMY_RESULT_SCHEMA"} {
		if v := sessionenv.Lookup(c.env, k); v != "" || k == EnvRef {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "AUTONOMY_WORKSPACE="+workspace, "AUTONOMY_RESULT="+resultPath)
}

// result reads the result the behavior wrote, bounded, and checks it against the actor's
// contract (autonomy.result.v1 unless it declares another: a script writes one JSON object to
// $AUTONOMY_RESULT), refusing a default result that says failed. An actor that opts out
// (result: { schema: none }) may write none.
func (c *sessionCall) result(cfg *ActorConfig, path string) ([]byte, error) {
	msg, err := bounded.ReadFile(path, MaxResultBytes-1) // the kubelet keeps MaxResultBytes
	if errors.Is(err, fs.ErrNotExist) {
		if cfg.Result == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("its behavior exited 0 without a result: write one satisfying %s to $AUTONOMY_RESULT", cfg.Result)
	}
	if bounded.IsTooLarge(err) {
		return nil, fmt.Errorf("its result is %d bytes or more: the kubelet keeps %d bytes of a termination message, so a longer result would arrive cut (keep the result under 4 KiB)", MaxResultBytes, MaxResultBytes)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Result == "" {
		return msg, nil
	}
	schemaPath := filepath.Join(c.dir, filepath.FromSlash(cfg.Result))
	raw, err := bounded.ReadFile(schemaPath, maxInstallBytes)
	if err != nil {
		return nil, fmt.Errorf("the actor's result contract: %v", err)
	}
	schema, err := decodeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("the actor's result contract %s: %v", cfg.Result, err)
	}
	if why := checkResult(schema, string(msg)); why != "" {
		return nil, errors.New(why)
	}
	if strings.HasSuffix(cfg.Result, "/"+ir.DefaultContract+".json") {
		if status, summary, err := tools.ReportedStatus(msg); err == nil && status == "failed" {
			return nil, fmt.Errorf("its behavior reported its work failed: %s", summary)
		}
	}
	return msg, nil
}

// decodeSchema decodes an installed result contract, without the DO NOT EDIT header member.
func decodeSchema(raw []byte) (any, error) {
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if m, ok := s.(map[string]any); ok {
		delete(m, "//")
	}
	return s, nil
}

// clipMessage bounds a failure's reason to what the kubelet keeps of a termination message.
func clipMessage(s string) []byte {
	if len(s) >= MaxResultBytes {
		s = s[:MaxResultBytes-4] + "..."
	}
	return []byte(s)
}

// writeTermination writes msg to the termination message file, which the kubelet created.
func writeTermination(path string, msg []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(msg); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
