package gitws

import (
	"context"
	"os/exec"
)

// Git runs git -C dir args… as the runner runs every git command (no hook, fsmonitor, filter,
// merge driver, replace ref, graft, commit-graph, global or system configuration, nor prompt:
// see gitEnv; retried on a lock file) and returns its standard output, trimmed.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return git(ctx, dir, args...)
}

// Output is Git with the output as git wrote it: NUL-separated paths (-z) keep every byte,
// leading and trailing spaces included; on a failure, what git wrote before it failed.
func Output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitRaw(ctx, dir, args)
}

// Failed says whether err is git's exit with status code (1 for "no", as merge-base
// --is-ancestor answers).
func Failed(err error, code int) bool { return exitCode(err) == code }

// Push runs git push in dir with the runner's git environment (as Git) and extra, which may carry
// a credential (GIT_CONFIG_KEY_0=http.extraHeader …): in the environment of git alone, never in
// its arguments, which every user of the machine can list.
func Push(ctx context.Context, dir string, extra []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "push"}, args...)...)
	cmd.Env = append(gitEnv(), extra...)
	return cmd.CombinedOutput()
}
