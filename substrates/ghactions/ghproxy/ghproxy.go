// Package ghproxy runs the model proxy (internal/modelproxy) in a gh-actions agent job: a step
// before the agent starts it detached (autonomy gh model-proxy), holding the real credential,
// and hands the steps after it only the proxy's URL and a placeholder key through $GITHUB_ENV;
// the last step (autonomy gh model-usage) stops it, writes the run's usage to the step summary
// and fails the job when the budget was exhausted. The transcript and the usage are left under
// $RUNNER_TEMP/autonomy-model for the workflow to upload.
package ghproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/autonomyhq/autonomy/internal/modelproxy"
)

// The files the proxy leaves in Dir, under $RUNNER_TEMP.
const (
	Dir            = "autonomy-model"
	TranscriptFile = "transcript.jsonl"
	UsageFile      = "usage.json"
	pidFile        = "proxy.pid"
	logFile        = "proxy.log"
)

// The env the model-proxy step reads (the workflow sets it).
const (
	// APIEnv is the API the agent speaks: openai or anthropic.
	APIEnv = "AUTONOMY_MODEL_API"
	// CredentialEnv names the variable holding the real credential (a secret, or the token the
	// step minted by OIDC); the agent's steps get the placeholder under the same name.
	CredentialEnv = "AUTONOMY_CREDENTIAL_ENV"
	// URLEnv is the upstream base URL (a repository's model endpoint or the reference's
	// proxy_host), empty for the public API; after the step it is the proxy's base URL.
	URLEnv = "AUTONOMY_MODEL_URL"
	// PolicyEnv is the Policy as JSON, compiled from policy.box.gh-actions.model.
	PolicyEnv = "AUTONOMY_MODEL_POLICY"
)

// Policy is the budget and prices of one run (policy.box.gh-actions.model).
type Policy struct {
	Budget modelproxy.Budget           `json:"budget"`
	Prices map[string]modelproxy.Price `json:"prices,omitempty"`
}

// DefaultBudget bounds a run whose profile names no budget, as the reference's model proxy
// does (--max-requests 250 --max-usd-cents 200); tokens are bounded by the cost.
var DefaultBudget = modelproxy.Budget{Requests: 250, CostUSD: 2}

// DefaultPrices are list prices in US dollars per million tokens of the presets' usual models;
// any other model is priced at modelproxy's deliberately high fallback.
var DefaultPrices = map[string]modelproxy.Price{
	"gpt-5":             {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-codex":       {Input: 1.25, CachedInput: 0.125, Output: 10},
	"gpt-5-mini":        {Input: 0.25, CachedInput: 0.025, Output: 2},
	"claude-sonnet-4-5": {Input: 3, CachedInput: 0.3, Output: 15},
	"claude-opus-4-1":   {Input: 15, CachedInput: 1.5, Output: 75},
	"claude-haiku-4-5":  {Input: 1, CachedInput: 0.1, Output: 5},
	"*":                 modelproxy.DefaultPrices["*"],
}

// ParsePolicy reads PolicyEnv's value; empty is the defaults.
func ParsePolicy(s string) (Policy, error) {
	p := Policy{Budget: DefaultBudget, Prices: DefaultPrices}
	if s == "" {
		return p, nil
	}
	var got Policy
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		return p, fmt.Errorf("%s is not the model policy the workflow compiles: %v (compile the workflow again)", PolicyEnv, err)
	}
	if got.Prices == nil {
		got.Prices = DefaultPrices
	}
	return got, nil
}

// upstream is the origin modelproxy forwards api to, from the base URL the agent would have
// used: an OpenAI base URL ending in /v1 loses it, which the proxy's routes add again; any other
// base (the reference's https://<proxy_host>) is taken as the origin the API paths follow.
func upstream(api modelproxy.API, base string) (string, error) {
	base = strings.TrimSuffix(base, "/")
	if base == "" {
		return "", nil
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" {
		return "", fmt.Errorf("%s %q is not an http(s) base URL, e.g. https://proxy.example/v1", URLEnv, base)
	}
	if api == modelproxy.OpenAI {
		base = strings.TrimSuffix(base, "/v1")
	}
	return base, nil
}

// agentURL is the base URL the agent's CLI is given for the proxy at root.
func agentURL(api modelproxy.API, root string) string {
	if api == modelproxy.Anthropic {
		return root + "/anthropic"
	}
	return root + "/openai/v1"
}

// parseAPI reads APIEnv.
func parseAPI(s string) (modelproxy.API, error) {
	switch api := modelproxy.API(s); api {
	case modelproxy.OpenAI, modelproxy.Anthropic:
		return api, nil
	case "":
		return modelproxy.OpenAI, nil
	}
	return "", fmt.Errorf("%s=%q: want openai or anthropic", APIEnv, s)
}

// errNoCredential is the model-proxy step run without its credential.
var errNoCredential = errors.New("the model credential is empty: set the repository secret the workflow names (or, with OIDC, check the job's id-token: write)")
