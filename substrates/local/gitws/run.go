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
	return transfer(ctx, dir, "push", extra, args)
}

// Fetch runs git fetch in dir as Push runs git push.
func Fetch(ctx context.Context, dir string, extra []string, args ...string) ([]byte, error) {
	return transfer(ctx, dir, "fetch", extra, args)
}

// remoteConfig is given to push and fetch. The repository's configuration, which the agent can
// write, must not make the runner's transfer run a program outside the sandbox: a remote or a
// url.<base>.insteadOf naming an ext:: command, an ssh remote (core.sshCommand), a credential
// helper or an askpass program. Only a path and http(s) are reached.
var remoteConfig = []string{
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=always",
	"-c", "protocol.http.allow=always",
	"-c", "protocol.https.allow=always",
	"-c", "protocol.ext.allow=never",
	"-c", "protocol.ssh.allow=never",
	"-c", "protocol.git.allow=never",
	"-c", "protocol.fd.allow=never",
	"-c", "credential.helper=",
	"-c", "core.askPass=",
}

// transfer runs git verb args… in dir, as Push says.
func transfer(ctx context.Context, dir, verb string, extra, args []string) ([]byte, error) {
	argv := append(append(append([]string{"-C", dir}, safeConfig...), remoteConfig...), verb)
	cmd := exec.CommandContext(ctx, "git", append(argv, args...)...)
	cmd.Env = append(gitEnv(), extra...)
	return cmd.CombinedOutput()
}
