//go:build unix

package modelfake_test

import (
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// A script violation makes each CLI fail promptly with the fake's message,
// instead of retrying until a test's timeout.
func TestCLIsFailFastOnScriptViolation(t *testing.T) {
	for _, preset := range []string{"codex", "claude"} {
		t.Run(preset, func(t *testing.T) {
			program := agentclitest.Require(t, preset)
			fake := modelfake.Start(modelfake.Turn{Shell: "echo only-turn"})
			defer fake.Close()
			var run cliRun
			start := time.Now()
			if preset == "codex" {
				env := []string{"CODEX_HOME=" + t.TempDir(), "HOME=" + t.TempDir(), "MODELFAKE_API_KEY=sk-modelfake"}
				run = runCLI(t, t.TempDir(), env, skillPrompt, codexArgv(program, fake.OpenAIBaseURL(), "danger-full-access")...)
			} else {
				run = runCLI(t, t.TempDir(), claudeEnv(t.TempDir(), fake.AnthropicBaseURL()), skillPrompt, claudeArgv(program)...)
			}
			took := time.Since(start)
			t.Logf("%s exited after %s: %v\nstdout:\n%s\nstderr:\n%s", preset, took, run.err, tail(run.stdout, 1500), tail(run.stderr, 1500))
			logRequests(t, fake)
			if err := fake.Err(); err == nil || !strings.Contains(err.Error(), "script exhausted") {
				t.Fatalf("Err = %v, want script exhausted", err)
			}
			if !strings.Contains(run.stdout+run.stderr, "script exhausted") {
				t.Errorf("%s did not show the fake's message", preset)
			}
			if took > 30*time.Second {
				t.Errorf("%s took %s to give up", preset, took)
			}
		})
	}
}
