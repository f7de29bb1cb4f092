package gitws

import (
	"context"
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
