package local

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// supervisorEnvFD names, in a supervisor's environment, the descriptor (3) its launcher writes
// the runner's whole environment to. The supervisor's own environment, which any process of your
// user can read in /proc/PID/environ (a session's script among them), holds only what is no
// secret: the sessions' allowlist, LC_*, AUTONOMY_*.
const supervisorEnvFD = "AUTONOMY_SUPERVISOR_ENV_FD"

// maxSupervisorEnv bounds what a supervisor reads of its environment pipe.
const maxSupervisorEnv = 4 << 20

// passEnv hands env to the supervisor cmd starts: the public part in its environment, the whole
// through a pipe (ExtraFiles[0], fd 3). Call the returned function once cmd has started (or
// failed to): it writes the pipe and closes both ends.
func passEnv(cmd *exec.Cmd, env []string) (func(started bool), error) {
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	public := []string{supervisorEnvFD + "=3"}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if sessionenv.Allowed(k) || strings.HasPrefix(k, "AUTONOMY_") && k != supervisorEnvFD {
			public = append(public, kv)
		}
	}
	cmd.Env, cmd.ExtraFiles = public, []*os.File{rd}
	return func(started bool) {
		rd.Close()
		if !started {
			wr.Close()
			return
		}
		// The pipe holds 64 KiB: the supervisor reads the rest as it starts, or its end closes
		// when it exits, and the write fails; it is given 10 s either way.
		_ = wr.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, _ = wr.Write([]byte(strings.Join(env, "\x00")))
		wr.Close()
	}, nil
}

// inheritedEnv is this process's environment: for a supervisor, the one its launcher wrote to
// descriptor 3 (passEnv); for any other process, os.Environ().
func inheritedEnv() []string {
	if os.Getenv(supervisorEnvFD) != "3" {
		return os.Environ()
	}
	f := os.NewFile(3, "supervisor-env")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSupervisorEnv))
	if err != nil || len(b) == 0 {
		return os.Environ()
	}
	var env []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return env
}
