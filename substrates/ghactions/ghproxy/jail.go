package ghproxy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

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
)

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
