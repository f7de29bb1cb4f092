package ghfake

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestEnvironments: GitHub's shapes for get, create-or-update (PUT replaces the rules) and list,
// and its errors (404 for a missing environment, 422 for a wait timer over 43200, more than six
// reviewers, an impossible branch policy, 400 for a body that is not JSON).
func TestEnvironments(t *testing.T) {
	s := newServer(t, Options{Collaborators: map[string]string{"alice": "admin"}})
	resp, body := call(t, s, http.MethodGet, "/repos/o/r/environments/prod", "")
	wantError(t, resp, body, http.StatusNotFound, "Not Found")

	alice := strconv.FormatInt(UserID("alice"), 10)
	resp, body = call(t, s, http.MethodPut, "/repos/o/r/environments/Prod", `{"wait_timer":5,"reviewers":[{"type":"User","id":`+alice+`}]}`)
	if resp.StatusCode != http.StatusOK || body["name"] != "Prod" {
		t.Fatalf("create: %d %v", resp.StatusCode, body)
	}
	resp, body = call(t, s, http.MethodGet, "/repos/o/r/environments/prod", "")
	rules, _ := body["protection_rules"].([]any)
	if resp.StatusCode != http.StatusOK || len(rules) != 2 {
		t.Fatalf("get (names are case-insensitive): %d %v", resp.StatusCode, body)
	}
	wait, rev := rules[0].(map[string]any), rules[1].(map[string]any)
	reviewers, _ := rev["reviewers"].([]any)
	if wait["type"] != "wait_timer" || wait["wait_timer"] != 5.0 || rev["type"] != "required_reviewers" || len(reviewers) != 1 ||
		reviewers[0].(map[string]any)["reviewer"].(map[string]any)["login"] != "alice" {
		t.Errorf("rules %v", rules)
	}
	// PUT with no body replaces the rules with none.
	resp, body = call(t, s, http.MethodPut, "/repos/o/r/environments/prod", "")
	if rules, _ := body["protection_rules"].([]any); resp.StatusCode != http.StatusOK || len(rules) != 0 {
		t.Errorf("an empty PUT: %d %v", resp.StatusCode, body)
	}
	resp, body = call(t, s, http.MethodGet, "/repos/o/r/environments", "")
	if envs, _ := body["environments"].([]any); resp.StatusCode != http.StatusOK || body["total_count"] != 1.0 || len(envs) != 1 {
		t.Errorf("list: %d %v", resp.StatusCode, body)
	}

	seven := strings.Repeat(`{"type":"User","id":1},`, 7)
	for name, b := range map[string]string{
		"wait timer":    `{"wait_timer":43201}`,
		"seven":         `{"reviewers":[` + strings.TrimSuffix(seven, ",") + `]}`,
		"branch policy": `{"deployment_branch_policy":{"protected_branches":true,"custom_branch_policies":true}}`,
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := call(t, s, http.MethodPut, "/repos/o/r/environments/prod", b)
			wantError(t, resp, body, http.StatusUnprocessableEntity, "Validation Failed")
		})
	}
	resp, body = call(t, s, http.MethodPut, "/repos/o/r/environments/prod", `{`)
	wantError(t, resp, body, http.StatusBadRequest, "Problems parsing JSON")
}
