package ghfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRunApprovals: a run's review history in GitHub's shape (environment-approvals: the
// environments reviewed, the state, the user, the comment), oldest first, per run; 404 for a
// run that does not exist; Review refuses a state GitHub has not, an environment that does not
// exist and a run that does not exist.
func TestRunApprovals(t *testing.T) {
	s, err := New(Options{Token: "t", Workflows: map[string]Workflow{"w.yml": {Dispatch: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(path string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"repos/o/r/"+path, nil)
		req.Header.Set("Authorization", "Bearer t")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data
	}
	run, _ := s.AddRun("w.yml", "workflow_dispatch")
	other, _ := s.AddRun("w.yml", "workflow_dispatch")
	path := "actions/runs/" + strconv.FormatInt(run, 10) + "/approvals"
	if code, body := get(path); code != 200 || string(body) != "[]" {
		t.Fatalf("no reviews: %d %s", code, body)
	}
	if code, _ := get("actions/runs/1/approvals"); code != 404 {
		t.Errorf("a missing run: %d, want 404", code)
	}
	s.SetEnvironment(Environment{Name: "prod", Reviewers: []int64{UserID("alice")}})
	for _, bad := range []struct {
		run          int64
		state, env   string
		wantInReason string
	}{
		{run, "approve", "prod", "review state"},
		{run, "approved", "staging", `no environment "staging"`},
		{1, "approved", "prod", "no run 1"},
	} {
		if err := s.Review(bad.run, "alice", bad.state, "", bad.env); err == nil || !strings.Contains(err.Error(), bad.wantInReason) {
			t.Errorf("Review(%d, %s, %s): %v, want %q", bad.run, bad.state, bad.env, err, bad.wantInReason)
		}
	}
	if err := s.Review(run, "alice", "rejected", "not yet", "prod"); err != nil {
		t.Fatal(err)
	}
	if err := s.Review(run, "alice", "approved", "ship it", "PROD"); err != nil {
		t.Fatal(err)
	}
	code, body := get(path)
	var got []struct {
		State        string `json:"state"`
		Comment      string `json:"comment"`
		Environments []struct {
			ID        int64  `json:"id"`
			NodeID    string `json:"node_id"`
			Name      string `json:"name"`
			URL       string `json:"url"`
			HTMLURL   string `json:"html_url"`
			CreatedAt string `json:"created_at"`
		} `json:"environments"`
		User struct {
			Login string `json:"login"`
			ID    int64  `json:"id"`
		} `json:"user"`
	}
	if err := json.Unmarshal(body, &got); err != nil || code != 200 || len(got) != 2 {
		t.Fatalf("%d %s: %v", code, body, err)
	}
	if got[0].State != "rejected" || got[0].Comment != "not yet" || got[1].State != "approved" || got[1].Comment != "ship it" {
		t.Errorf("history %+v, want rejected then approved", got)
	}
	e := got[1].Environments
	if len(e) != 1 || e[0].Name != "prod" || e[0].ID == 0 || e[0].NodeID == "" || !strings.HasSuffix(e[0].URL, "/environments/prod") || e[0].HTMLURL == "" || e[0].CreatedAt == "" {
		t.Errorf("environments %+v", e)
	}
	if got[1].User.Login != "alice" || got[1].User.ID != UserID("alice") {
		t.Errorf("user %+v", got[1].User)
	}
	if code, body := get("actions/runs/" + strconv.FormatInt(other, 10) + "/approvals"); code != 200 || string(body) != "[]" {
		t.Errorf("another run's history: %d %s", code, body)
	}
}
