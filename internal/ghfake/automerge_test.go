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

// TestMergePull: a person's merge waits for the base's protection; merged, the pull request is
// closed and reads, as GitHub's pulls API does, the head it merged as head.sha, even after its
// branch moved on, and the commit that landed as merge_commit_sha. DisableAutoMerge makes
// auto_merge null again.
func TestMergePull(t *testing.T) {
	s, head := codeHost(t, Options{})
	s.SetSettings(Settings{AllowAutoMerge: true, DefaultWorkflowPermissions: "read"})
	s.Protect("main", Protection{Contexts: []string{"agent-review"}})
	_, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"the change","head":"feature","base":"main"}`)
	n := int(body["number"].(float64))
	q := `{"query":"mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id}) { pullRequest { number } } }","variables":{"id":"` + nodeID(n) + `"}}`
	call(t, s, "POST", "/graphql", q)
	s.DisableAutoMerge(n)
	if _, pr := call(t, s, "GET", "/repos/o/r/pulls/"+strconv.Itoa(n), ""); pr["auto_merge"] != nil {
		t.Errorf("auto_merge after DisableAutoMerge: %v", pr["auto_merge"])
	}
	if err := s.MergePull(n, "maintainer", "merge"); err == nil || !strings.Contains(err.Error(), "agent-review") {
		t.Errorf("a merge before its required check: %v", err)
	}
	call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"success","context":"agent-review"}`)
	if err := s.MergePull(n, "maintainer", "merge"); err != nil {
		t.Fatal(err)
	}
	if err := s.git("update-ref", "refs/heads/feature", s.sha("main")); err != nil {
		t.Fatal(err)
	}
	_, pr := call(t, s, "GET", "/repos/o/r/pulls/"+strconv.Itoa(n), "")
	if pr["merged"] != true || pr["state"] != "closed" || pr["head"].(map[string]any)["sha"] != head || pr["merge_commit_sha"] != s.sha("main") {
		t.Errorf("merged: %v %v head %v merge commit %v (main %s)", pr["merged"], pr["state"], pr["head"], pr["merge_commit_sha"], s.sha("main"))
	}
	if err := s.MergePull(n, "maintainer", "merge"); err == nil {
		t.Error("a closed pull request merged again")
	}
}
