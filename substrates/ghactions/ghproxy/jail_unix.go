//go:build unix

package ghproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/autonomyhq/autonomy/internal/egress"
)

// Jail runs argv, the agent, in its network sandbox (egress.Open): only the model proxy the
// step before started (URLEnv) and an egress proxy this process serves, admitting what
// EgressAllowEnv lists, are reachable from inside; the proxy's decisions are appended to
// EgressFile under $RUNNER_TEMP/Dir. It returns the agent's exit code.
func Jail(ctx context.Context, getenv func(string) string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("no command to run")
	}
	ports, cfg, err := jailConfig(getenv)
	if err != nil {
		return 0, err
	}
	temp := getenv("RUNNER_TEMP")
	if temp == "" {
		return 0, errors.New("RUNNER_TEMP is not set: gh jail runs in a GitHub Actions step")
	}
	if err := os.MkdirAll(filepath.Join(temp, Dir), 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(filepath.Join(temp, Dir, EgressFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cfg.Log = logf
	sb, err := egress.Open(ctx, &cfg, ports...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	wrapped := sb.Wrap(argv)
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Env = withEnv(os.Environ(), sb.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("cannot start the agent's sandbox: %v", err)
	}
	return 0, nil
}

// withEnv is env with each NAME=value of set replacing any earlier NAME.
func withEnv(env, set []string) []string {
	names := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !names[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
