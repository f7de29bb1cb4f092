package ghfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func envRequest(t *testing.T, s *Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+"repos/o/r/"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, data)
	}
	return resp.StatusCode, out
}

// TestEnvironmentsEndpoints: GitHub's shapes (protection_rules, deployment_branch_policy, the
// list's total_count) and its errors (404 for a missing environment, 422 for more than 6
// reviewers, a wait timer out of range, an unknown reviewer or type, a bad branch policy).
func TestEnvironmentsEndpoints(t *testing.T) {
	s, err := New(Options{Token: "t", Users: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, body := envRequest(t, s, "GET", "environments/prod", ""); code != 404 || body["message"] != "Not Found" {
		t.Fatalf("missing: %d %v", code, body)
	}
	alice := UserID("alice")
	for body, field := range map[string]string{
		`{"wait_timer": 43201}`: "wait_timer",
		`{"reviewers": [{"type":"User","id":1},{"type":"User","id":2},{"type":"User","id":3},{"type":"User","id":4},{"type":"User","id":5},{"type":"User","id":6},{"type":"User","id":7}]}`: "reviewers",
		`{"reviewers": [{"type":"Robot","id":1}]}`:                                                   "reviewers",
		`{"reviewers": [{"type":"User","id":42}]}`:                                                   "reviewers",
		`{"deployment_branch_policy": {"protected_branches": true, "custom_branch_policies": true}}`: "deployment_branch_policy",
	} {
		code, out := envRequest(t, s, "PUT", "environments/prod", body)
		errs, _ := out["errors"].([]any)
		if code != 422 || len(errs) != 1 || errs[0].(map[string]any)["field"] != field {
			t.Errorf("%s: %d %v, want 422 on %s", body, code, out, field)
		}
	}
	if len(s.Environments()) != 0 {
		t.Fatalf("a refused PUT created %+v", s.Environments())
	}
	code, out := envRequest(t, s, "PUT", "environments/prod", `{"wait_timer": 5, "can_admins_bypass": false, "reviewers": [{"type":"User","id":`+jsonInt(alice)+`}], "deployment_branch_policy": {"protected_branches": true, "custom_branch_policies": false}}`)
	if code != 200 || out["name"] != "prod" || out["can_admins_bypass"] != false {
		t.Fatalf("create: %d %v", code, out)
	}
	rules, _ := out["protection_rules"].([]any)
	var types []string
	for _, r := range rules {
		types = append(types, r.(map[string]any)["type"].(string))
	}
	if strings.Join(types, ",") != "wait_timer,required_reviewers,branch_policy" {
		t.Errorf("rules %v", types)
	}
	rv := rules[1].(map[string]any)["reviewers"].([]any)[0].(map[string]any)["reviewer"].(map[string]any)
	if rv["login"] != "alice" || int64(rv["id"].(float64)) != alice {
		t.Errorf("reviewer %v", rv)
	}
	code, list := envRequest(t, s, "GET", "environments", "")
	if envs, _ := list["environments"].([]any); code != 200 || list["total_count"] != float64(1) || len(envs) != 1 {
		t.Errorf("list: %d %v", code, list)
	}
	// A PUT replaces the settings (GitHub's semantics): an empty body clears the rules.
	if code, out := envRequest(t, s, "PUT", "environments/PROD", `{}`); code != 200 || out["name"] != "prod" || len(out["protection_rules"].([]any)) != 0 {
		t.Errorf("replace: %d %v", code, out)
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
