package ghfake

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestForkPullNamesTheFork: a pull request from another owner's fork (head "mallory:branch" on
// create, as GitHub's docs have it) names the fork as its head repository, and stands beside
// the repository's own pull request from a branch of the same name.
func TestForkPullNamesTheFork(t *testing.T) {
	s, head := codeHost(t, Options{})
	if out, err := exec.Command("git", "--git-dir", s.opts.GitDir, "update-ref", ForkRef("mallory", "feature"), head).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	resp, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"mallory:nope","base":"main"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, fork := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"mallory:feature","base":"main"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create from the fork: %d %v", resp.StatusCode, fork)
	}
	h := fork["head"].(map[string]any)
	repo := h["repo"].(map[string]any)
	if h["label"] != "mallory:feature" || h["ref"] != "feature" || h["sha"] != head || repo["full_name"] != "mallory/r" || repo["fork"] != true {
		t.Errorf("the fork's pull request: head %v", h)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"mallory:feature","base":"main"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	if msg := body["errors"].([]any)[0].(map[string]any)["message"]; msg != "A pull request already exists for mallory:feature." {
		t.Errorf("duplicate from the fork: %v", msg)
	}
	resp, own := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"y","head":"feature","base":"main"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("the repository's own pull request from a branch of the same name: %d %v", resp.StatusCode, own)
	}
	h = own["head"].(map[string]any)
	if repo := h["repo"].(map[string]any); h["label"] != "o:feature" || repo["full_name"] != "o/r" || repo["fork"] != false {
		t.Errorf("the repository's pull request: head %v", h)
	}
	if list := listed(t, s, "/repos/o/r/pulls?base=release"); len(list) != 0 {
		t.Errorf("?base=release lists %d pull requests into main", len(list))
	}
	for filter, want := range map[string]any{"mallory:feature": fork["number"], "o:feature": own["number"], "MALLORY:feature": fork["number"], "o:feature&base=main": own["number"]} {
		list := listed(t, s, "/repos/o/r/pulls?head="+filter)
		if len(list) != 1 || list[0]["number"] != want {
			t.Errorf("?head=%s lists %d pull requests, want #%v", filter, len(list), want)
		}
	}
	n, err := s.OpenForkPull("eve", "z", "feature", "main")
	if err == nil {
		t.Errorf("OpenForkPull from eve's fork, which has no branch feature: #%d", n)
	}
}

// listed is a GET's JSON array.
func listed(t *testing.T, s *Server, path string) []map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", strings.TrimSuffix(s.URL, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
