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
	"slices"
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
	writes, err := tempWrites(getenv, temp)
	if err != nil {
		return 0, err
	}
	for _, w := range writes {
		// Bound writable, so each must exist.
		if err := os.MkdirAll(w, 0o700); err != nil {
			return 0, err
		}
	}
	logf, err := os.OpenFile(filepath.Join(temp, Dir, EgressFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	if r := getenv("AUTONOMY_RESULT"); r != "" {
		// The agent's final message is the one file of RUNNER_TEMP it writes: bound writable,
		// so it must exist.
		if f, err := os.OpenFile(r, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			f.Close()
		}
	}
	cfg.Log = logf
	sb, err := egress.Open(ctx, &cfg, ports...)
	if err != nil {
		return 0, err
	}
	defer sb.Close()
	wrapped := sb.WrapIn(confinement(getenv, runnerInstalls(os.Getppid()), writes), argv)
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Env = withEnv(jailedEnv(os.Environ()), sb.Env)
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

// runnerInstalls are the folders the runner (Runner.Worker, pid or among its ancestors) is
// installed in: the node the later steps' actions run with is there.
func runnerInstalls(pid int) []string {
	var out []string
	for i := 0; i < 64 && pid > 1; i++ {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
			dir := filepath.Dir(filepath.Dir(exe))
			if b := filepath.Base(exe); (b == "Runner.Worker" || b == "Runner.Listener") && !slices.Contains(out, dir) {
				out = append(out, dir)
			}
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			break
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		var state string
		if _, err := fmt.Sscan(rest, &state, &pid); err != nil {
			break
		}
	}
	return out
}
