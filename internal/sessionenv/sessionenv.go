// Package sessionenv is the environment allowlist every substrate's session shares: the
// variables of the runner's (or the pod's) environment a session receives, what a shell, git,
// node and the pinned CLIs need to run, and nothing that grants anything.
package sessionenv

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// allowed are the variables every session receives. Everything else (a code-host token, a cloud
// secret, the model credential) stays with the runner unless the profile names it, and so do the
// addresses of what acts for the user outside any sandbox: XDG_RUNTIME_DIR (systemd --user, the
// session bus), DBUS_SESSION_BUS_ADDRESS, SSH_AUTH_SOCK.
var allowed = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLORTERM": true, "NO_COLOR": true, "TMPDIR": true,
	"XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true,
	// TLS roots a machine behind a corporate proxy points its tools at.
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true,
}

// Allowed reports whether the variable k is on the allowlist: one of the names above or the
// locale's LC_*.
func Allowed(k string) bool {
	return allowed[k] || strings.HasPrefix(k, "LC_")
}

// NodeVersion runs `node --version`, bounded: a node that hangs must not hang a session's start.
// It is what ir.ScriptRun.Argv asks when a .ts script needs a Node.js that strips types.
func NodeVersion(node string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	return string(out), err
}

// Lookup is the value of name in env, a list of KEY=VALUE entries: its last entry, as exec does
// ("" when unset).
func Lookup(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// With sets each NAME=value of set in env, replacing any earlier value of that name.
func With(env []string, set ...string) []string {
	names := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !names[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
