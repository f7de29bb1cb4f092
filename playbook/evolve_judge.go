package playbook

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/agentcli"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/playbook/stepsrun"
)

// JudgeTimeout bounds one judgement.
const JudgeTimeout = 5 * time.Minute

// judgeBudget bounds the judge's model use: one question, a few turns at most.
var judgeBudget = modelproxy.Budget{Requests: 8}

// AgentJudge is the LLM judge of policy.box.evolve.judge: the preset's pinned CLI (agentcli.Find:
// the agent cache, or PATH at the pinned version), asked once in an empty scratch workspace in
// its sandbox, against a model proxy this process runs. The proxy holds the credential the
// environment environ gives (the preset's CredentialEnv, upstream its BaseURLEnv when set); the
// CLI's environment holds only a placeholder key, the proxy's URL, PATH, HOME, TMPDIR and the
// preset's own configuration variables. log receives the CLI's output.
func AgentJudge(cfg JudgeConfig, environ []string, log io.Writer) (func(ctx context.Context, prompt string) (string, error), error) {
	p, ok := agent.Lookup(cfg.Agent)
	if !ok {
		return nil, fmt.Errorf("policy.box.evolve.judge.agent %q is no agent preset (%s)", cfg.Agent, strings.Join(agent.Names(), ", "))
	}
	program, err := agentcli.Find(p.Name, p.Version)
	if err != nil {
		return nil, fmt.Errorf("the judge needs the pinned %s: %v", p.Describe(), err)
	}
	key := envValue(environ, p.CredentialEnv)
	if key == "" {
		return nil, fmt.Errorf("the judge runs %s against a model proxy holding the model's credential: set %s (and %s for another endpoint than the public API)", p.Name, p.CredentialEnv, p.BaseURLEnv)
	}
	return func(ctx context.Context, prompt string) (string, error) {
		pcfg := modelproxy.Config{Placeholder: modelproxy.NewPlaceholder(), Budget: judgeBudget}
		upstream := strings.TrimSuffix(envValue(environ, p.BaseURLEnv), "/")
		if p.CredentialEnv == "ANTHROPIC_API_KEY" {
			pcfg.AnthropicKey, pcfg.AnthropicUpstream = key, upstream
		} else {
			pcfg.OpenAIKey, pcfg.OpenAIUpstream = key, strings.TrimSuffix(upstream, "/v1")
		}
		proxy, err := modelproxy.New(pcfg)
		if err != nil {
			return "", fmt.Errorf("the judge's model proxy: %v (check %s)", err, p.BaseURLEnv)
		}
		pctx, cancel := context.WithCancel(ctx)
		url, done, err := modelproxy.Listen(pctx, proxy)
		if err != nil {
			cancel()
			return "", err
		}
		defer func() { cancel(); <-done }()
		if p.CredentialEnv == "ANTHROPIC_API_KEY" {
			url += "/anthropic"
		} else {
			url += "/openai/v1"
		}
		work, err := os.MkdirTemp("", "autonomy-judge-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(work)
		env := []string{p.CredentialEnv + "=" + pcfg.Placeholder, p.BaseURLEnv + "=" + url}
		for _, k := range append([]string{"PATH", "HOME", "TMPDIR"}, p.ConfigEnv...) {
			if v := envValue(environ, k); v != "" {
				env = append(env, k+"="+v)
			}
		}
		argv := p.Argv(agent.Options{Model: cfg.Model})
		argv[0] = program
		c := &stepsrun.Command{Argv: argv, Preset: p.Name, Dir: work, Env: env, Log: log, Timeout: JudgeTimeout}
		return c.Invoke(ctx, "judge", prompt)
	}, nil
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}
