package ghproxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/egress"
)

// The env autonomy gh jail reads (the workflow sets it on the agent's step), besides URLEnv.
const (
	// EgressAllowEnv is policy.box.gh-actions.egress.allow as a JSON list of hosts.
	EgressAllowEnv = "AUTONOMY_EGRESS_ALLOW"
	// EgressGuardEnv is "true" when private_egress_guard is on.
	EgressGuardEnv = "AUTONOMY_EGRESS_GUARD"
	// EgressFile, in Dir, holds the egress proxy's decisions, one JSON line each.
	EgressFile = "egress.jsonl"
	// TempWriteEnv is a JSON list of the folders of RUNNER_TEMP, by name, the jailed command
	// writes: a step playbook's run state and artifacts, which autonomy playbook run, jailed
	// with its steps' agent, keeps there.
	TempWriteEnv = "AUTONOMY_JAIL_TEMP_WRITE"
)

// tempWrites are the folders TempWriteEnv names, under temp: each a plain name, never Dir (the
// audit files) nor a runner's folder (a leading underscore: its file commands, its tools).
func tempWrites(getenv func(string) string, temp string) ([]string, error) {
	raw := getenv(TempWriteEnv)
	if raw == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(raw), &names); err != nil {
		return nil, fmt.Errorf("%s must be a JSON list of folder names: %v", TempWriteEnv, err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) || n == Dir || strings.HasPrefix(n, "_") {
			return nil, fmt.Errorf("%s: %q is not a folder of RUNNER_TEMP the agent may write (a plain name, not %s nor a runner's _folder)", TempWriteEnv, n, Dir)
		}
		out = append(out, filepath.Join(temp, n))
	}
	return out, nil
}

// jailConfig is what the step's env says of the sandbox: the ports bridged in (the model
// proxy's) and what the egress proxy admits.
func jailConfig(getenv func(string) string) ([]int, egress.Config, error) {
	u, err := url.Parse(getenv(URLEnv))
	port, perr := strconv.Atoi(u.Port())
	if getenv(URLEnv) == "" || err != nil || perr != nil || u.Hostname() != "127.0.0.1" {
		return nil, egress.Config{}, fmt.Errorf("%s is %q, not the model proxy's URL: gh model-proxy runs in a step before", URLEnv, getenv(URLEnv))
	}
	var allow []string
	if err := json.Unmarshal([]byte(getenv(EgressAllowEnv)), &allow); err != nil {
		return nil, egress.Config{}, fmt.Errorf("%s must be a JSON list of hosts: %v", EgressAllowEnv, err)
	}
	cfg := egress.Config{What: "policy.box.gh-actions.egress.allow"}
	for _, a := range allow {
		r, err := egress.ParseRule(a)
		if err != nil {
			return nil, egress.Config{}, fmt.Errorf("%s: %v", EgressAllowEnv, err)
		}
		cfg.Allow = append(cfg.Allow, r)
	}
	switch g := getenv(EgressGuardEnv); g {
	case "true":
	case "false", "":
		cfg.AllowPrivateLiterals = true
	default:
		return nil, egress.Config{}, fmt.Errorf("%s must be true or false, not %q", EgressGuardEnv, g)
	}
	ports := []int{port}
	// The GitHub API the job's own tools call (autonomy runner, the gh shim) is always
	// reachable: through the egress proxy, or bridged when it is on loopback (a test's).
	api, err := url.Parse(getenv("GITHUB_API_URL"))
	if err != nil || getenv("GITHUB_API_URL") == "" {
		api = &url.URL{Scheme: "https", Host: "api.github.com"}
	}
	if p, err := strconv.Atoi(api.Port()); api.Hostname() == "127.0.0.1" && err == nil {
		ports = append(ports, p)
	} else if r, err := egress.ParseRule(api.Host); err == nil && api.Scheme == "https" {
		cfg.Allow = append(cfg.Allow, r)
	}
	return ports, cfg, nil
}

// runnerEnv are the variables of the runner's step environment the agent must not have: the
// files a step appends to to set the later steps' environment, PATH, outputs, state and summary
// (workflow commands), and the runner's tokens.
var runnerEnv = map[string]bool{
	"GITHUB_ENV": true, "GITHUB_PATH": true, "GITHUB_OUTPUT": true, "GITHUB_STATE": true, "GITHUB_STEP_SUMMARY": true,
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": true, "ACTIONS_ID_TOKEN_REQUEST_URL": true,
	"ACTIONS_RUNTIME_TOKEN": true, "ACTIONS_RUNTIME_URL": true, "ACTIONS_RESULTS_URL": true, "ACTIONS_CACHE_URL": true,
}

// jailedEnv is env without runnerEnv.
func jailedEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !runnerEnv[k] {
			out = append(out, kv)
		}
	}
	return out
}

// confinement is the agent's filesystem in the jail: read-only, but for its home, /tmp, the
// checkout, the two files of RUNNER_TEMP it writes (its final message, the safe outputs) and
// the folders of RUNNER_TEMP TempWriteEnv names (writes);
// the runner's folders, which the home may hold (its work folder with the actions the later
// steps run, the file commands, RUNNER_TEMP with autonomy's binary and the audit files, the
// runner's own installs), stay read-only. The agent makes no user namespace (on gh-actions the
// presets run with their own sandbox bypassed: the jail is the sandbox), and has a process
// namespace of its own: it cannot signal the model proxy, and nothing it starts outlives it.
func confinement(getenv func(string) string, installs, writes []string) *egress.Confinement {
	c := &egress.Confinement{NoUserNS: true, PidNS: true}
	// A relative path is the one the command sees from its working directory: bound as given,
	// it would name another place inside the sandbox, leaving this one as the host has it.
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	rw := func(p string) {
		if p != "" {
			c.Binds = append(c.Binds, egress.Bind{Path: abs(p), Write: true})
		}
	}
	ro := func(p string) {
		if p != "" {
			c.Binds = append(c.Binds, egress.Bind{Path: abs(p)})
		}
	}
	rw(getenv("HOME"))
	rw("/tmp")
	if w := getenv("RUNNER_WORKSPACE"); w != "" {
		ro(filepath.Dir(w)) // the runner's work folder: _actions, _temp, _tool and the checkouts
	}
	ro(getenv("RUNNER_TEMP"))
	if bin := getenv("AUTONOMY_BIN"); bin != "" {
		ro(filepath.Dir(bin)) // the autonomy the later steps run
	}
	for _, d := range installs {
		ro(d)
	}
	rw(getenv("GITHUB_WORKSPACE"))
	if o := getenv("AUTONOMY_OUTPUTS"); o != "" {
		rw(filepath.Dir(o))
	}
	rw(getenv("AUTONOMY_RESULT"))
	for _, w := range writes {
		rw(w)
	}
	return c
}
