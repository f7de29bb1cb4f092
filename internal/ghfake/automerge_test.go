package ghfake

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestAutoMergeMerges: with AutoMergeMerges, a pull request with auto-merge armed stays open
// while a required check is missing or failing, and merges (squash: one commit of the head's
// tree on the base) once every required check is success on its head: closed, merged by the
// user who armed it, its branch deleted as the repository's setting asks.
func TestAutoMergeMerges(t *testing.T) {
	s, head := codeHost(t, Options{AutoMergeMerges: true})
	s.SetSettings(Settings{AllowAutoMerge: true, DeleteBranchOnMerge: true, DefaultWorkflowPermissions: "read"})
	s.Protect("main", Protection{Contexts: []string{"agent-review", "ci"}, Strict: true})
	_, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"the change","head":"feature","base":"main"}`)
	n := int(body["number"].(float64))
	q := `{"query":"mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH}) { pullRequest { number } } }","variables":{"id":"` + nodeID(n) + `"}}`
	if _, body := call(t, s, "POST", "/graphql", q); body["errors"] != nil {
		t.Fatalf("arming: %v", body)
	}
	pull := func() map[string]any {
		_, pr := call(t, s, "GET", "/repos/o/r/pulls/"+strconv.Itoa(n), "")
		return pr
	}
	for _, st := range []string{`{"state":"failure","context":"agent-review"}`, `{"state":"success","context":"ci"}`} {
		call(t, s, "POST", "/repos/o/r/statuses/"+head, st)
		if pr := pull(); pr["merged"] != false || pr["state"] != "open" {
			t.Fatalf("merged before its checks pass (%s): %v %v", st, pr["merged"], pr["state"])
		}
	}
	call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"success","context":"agent-review"}`)
	pr := pull()
	by, _ := pr["merged_by"].(map[string]any)
	if pr["merged"] != true || pr["state"] != "closed" || by["login"] != BotLogin || pr["head"].(map[string]any)["sha"] != head {
		t.Fatalf("once its checks pass: merged %v, state %v, by %v, head %v", pr["merged"], pr["state"], by, pr["head"])
	}
	main := s.sha("main")
	if main != pr["merge_commit_sha"] || s.sha("feature") != "" {
		t.Errorf("main is %s, the merge commit %v; feature is %q", main, pr["merge_commit_sha"], s.sha("feature"))
	}
	got, err := exec.Command("git", "--git-dir", s.opts.GitDir, "rev-parse", main+"^{tree}", head+"^{tree}", main+"^").Output()
	if lines := strings.Fields(string(got)); err != nil || lines[0] != lines[1] || lines[2] == head {
		t.Errorf("the squash commit: %v %q", err, got)
	}
	if ok, why := s.Mergeable(n); ok || why != "it is merged" {
		t.Errorf("Mergeable after the merge: %v %s", ok, why)
	}
}
