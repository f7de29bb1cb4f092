package ghfake

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// codeHost is a fake over a bare repository holding main and a feature branch ahead of it.
func codeHost(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	bare := filepath.Join(dir, "origin.git")
	git := func(d string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = d
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(dir, "init", "--quiet", "--bare", bare)
	work := filepath.Join(dir, "w")
	git(dir, "clone", "--quiet", bare, work)
	git(work, "commit", "--quiet", "--allow-empty", "-m", "one")
	git(work, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	git(work, "commit", "--quiet", "--allow-empty", "-m", "two")
	git(work, "push", "--quiet", "origin", "HEAD:refs/heads/feature")
	opts.GitDir = bare
	return newServer(t, opts), git(work, "rev-parse", "HEAD")
}

// TestCodeHostErrors: the code-host endpoints answer bad requests with GitHub's codes and shapes.
func TestCodeHostErrors(t *testing.T) {
	s, head := codeHost(t, Options{ReadOnlyToken: "ro"})
	issue := s.AddIssue("work", "")

	resp, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"nope","base":"main"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"main","base":"main"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"o:feature","base":"main"}`)
	if resp.StatusCode != 201 || body["number"] != float64(issue+1) || body["head"].(map[string]any)["sha"] != head {
		t.Fatalf("create: %d %v", resp.StatusCode, body)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"feature","base":"main"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	if errs := body["errors"].([]any); !strings.Contains(errs[0].(map[string]any)["message"].(string), "A pull request already exists for o:feature.") {
		t.Errorf("duplicate: %v", body)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/pulls", `{"title":`)
	wantError(t, resp, body, 400, "Problems parsing JSON")

	resp, body = call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"fine","context":"agent-review"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "POST", "/repos/o/r/statuses/"+strings.Repeat("0", 40), `{"state":"success"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"success","context":"agent-review"}`, "Bearer ro")
	wantError(t, resp, body, 403, "Resource not accessible by integration")
	resp, _ = call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"success","context":"agent-review"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("status: %d", resp.StatusCode)
	}
	resp, body = call(t, s, "GET", "/repos/o/r/commits/feature/status", "")
	if resp.StatusCode != 200 || body["total_count"] != float64(1) {
		t.Errorf("combined status: %v", body)
	}

	resp, body = call(t, s, "POST", "/repos/o/r/issues/99/comments", `{"body":"x"}`)
	wantError(t, resp, body, 404, "Not Found")
	resp, body = call(t, s, "POST", "/repos/o/r/issues/1/comments", `{}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "GET", "/repos/o/r/branches/main/protection", "")
	wantError(t, resp, body, 404, "Branch not protected")

	pr := issue + 1
	if ok, _ := s.Mergeable(pr); ok {
		t.Error("mergeable without protection")
	}
	s.Protect("main", Protection{Contexts: []string{"agent-review", "ci"}, Strict: true})
	if ok, why := s.Mergeable(pr); ok || !strings.Contains(why, "ci") {
		t.Errorf("mergeable without ci: %v %s", ok, why)
	}
	call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"success","context":"ci"}`)
	if ok, why := s.Mergeable(pr); !ok {
		t.Errorf("not mergeable with both checks: %s", why)
	}
	call(t, s, "POST", "/repos/o/r/statuses/"+head, `{"state":"failure","context":"agent-review"}`)
	if ok, _ := s.Mergeable(pr); ok {
		t.Error("the latest status of a context is what counts")
	}
}

// TestSettingsErrors: settings, labels, variables and protection answer bad requests as GitHub does.
func TestSettingsErrors(t *testing.T) {
	s, _ := codeHost(t, Options{ReadOnlyToken: "ro"})
	resp, body := call(t, s, "POST", "/repos/o/r/labels", `{"name":"ready","color":"ededed"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create label: %d %v", resp.StatusCode, body)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/labels", `{"name":"Ready"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "GET", "/repos/o/r/labels/nope", "")
	wantError(t, resp, body, 404, "Not Found")
	resp, _ = call(t, s, "POST", "/repos/o/r/actions/variables", `{"name":"AUTONOMY_PAUSED","value":"false"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create variable: %d", resp.StatusCode)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/actions/variables", `{"name":"AUTONOMY_PAUSED","value":"true"}`)
	wantError(t, resp, body, 409, "Already exists - Variable already exists")
	resp, body = call(t, s, "POST", "/repos/o/r/actions/variables", `{"name":"GITHUB_X","value":"1"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "GET", "/repos/o/r/actions/variables/NOPE", "")
	wantError(t, resp, body, 404, "Not Found")
	resp, body = call(t, s, "PUT", "/repos/o/r/branches/main/protection", `{"required_status_checks":null}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "PUT", "/repos/o/r/branches/nope/protection", `{"required_status_checks":null,"enforce_admins":true,"required_pull_request_reviews":null,"restrictions":null}`)
	wantError(t, resp, body, 404, "Branch not found")
	resp, body = call(t, s, "PUT", "/repos/o/r/actions/permissions/workflow", `{"default_workflow_permissions":"admin"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "PATCH", "/repos/o/r", `{"allow_auto_merge":true}`, "Bearer ro")
	wantError(t, resp, body, 403, "Resource not accessible by integration")
	if s.CurrentSettings().AllowAutoMerge {
		t.Error("a read-only token changed a setting")
	}
}

// TestGitDataErrors: refs refuse a duplicate and a non-fast-forward update as GitHub does.
func TestGitDataErrors(t *testing.T) {
	s, head := codeHost(t, Options{})
	resp, body := call(t, s, "POST", "/repos/o/r/git/refs", `{"ref":"refs/heads/main","sha":"`+head+`"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "GET", "/repos/o/r/git/ref/heads/main", "")
	if resp.StatusCode != 200 {
		t.Fatalf("get ref: %d %v", resp.StatusCode, body)
	}
	main := body["object"].(map[string]any)["sha"].(string)
	resp, body = call(t, s, "PATCH", "/repos/o/r/git/refs/heads/feature", `{"sha":"`+main+`"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	if errs := body["errors"].([]any); errs[0].(map[string]any)["message"] != "Update is not a fast forward" {
		t.Errorf("non-fast-forward: %v", body)
	}
	resp, _ = call(t, s, "PATCH", "/repos/o/r/git/refs/heads/feature", `{"sha":"`+main+`","force":true}`)
	if resp.StatusCode != 200 {
		t.Errorf("forced update: %d", resp.StatusCode)
	}
	resp, body = call(t, s, "GET", "/repos/o/r/git/commits/"+strings.Repeat("0", 40), "")
	wantError(t, resp, body, 404, "Not Found")
	resp, body = call(t, s, "POST", "/repos/o/r/git/trees", `{"base_tree":"nope","tree":[]}`)
	wantError(t, resp, body, 422, "Validation Failed")
}

// TestAutoMergeExpectedHead: enablePullRequestAutoMerge with an expectedHeadOid is refused when
// the pull request's head is another commit, as GitHub refuses it, and arms it on that head.
func TestAutoMergeExpectedHead(t *testing.T) {
	s, head := codeHost(t, Options{})
	s.SetSettings(Settings{AllowAutoMerge: true, DefaultWorkflowPermissions: "read"})
	s.Protect("main", Protection{Contexts: []string{"agent-review"}})
	resp, body := call(t, s, "POST", "/repos/o/r/pulls", `{"title":"x","head":"feature","base":"main"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %v", resp.StatusCode, body)
	}
	n := int(body["number"].(float64))
	q := `{"query":"mutation($id: ID!, $head: GitObjectID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH, expectedHeadOid: $head}) { pullRequest { number } } }","variables":{"id":"` + nodeID(n) + `","head":"%s"}}`
	_, body = call(t, s, "POST", "/graphql", strings.Replace(q, "%s", strings.Repeat("0", 40), 1))
	if body["errors"] == nil || s.AutoMerge(n) {
		t.Errorf("auto-merge for another head: %v, armed %v", body, s.AutoMerge(n))
	}
	if _, pr := call(t, s, "GET", "/repos/o/r/pulls/"+strconv.Itoa(n), ""); pr["auto_merge"] != nil {
		t.Errorf("auto_merge before it is armed: %v", pr["auto_merge"])
	}
	_, body = call(t, s, "POST", "/graphql", strings.Replace(q, "%s", head, 1))
	if body["errors"] != nil || !s.AutoMerge(n) {
		t.Errorf("auto-merge for the head: %v, armed %v", body, s.AutoMerge(n))
	}
	// The REST pull request shows it armed (auto_merge), with its merge method.
	_, pr := call(t, s, "GET", "/repos/o/r/pulls/"+strconv.Itoa(n), "")
	if am, _ := pr["auto_merge"].(map[string]any); am == nil || am["merge_method"] != "squash" {
		t.Errorf("auto_merge once armed: %v", pr["auto_merge"])
	}
}
