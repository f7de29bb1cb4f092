package ghfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestControlEndpoints: reactions, assignees, review requests, issue lists and re-runs behave
// and fail as GitHub documents.
func TestControlEndpoints(t *testing.T) {
	s, _ := codeHost(t, Options{ReadOnlyToken: "ro", Collaborators: map[string]string{"ada": "admin"}, Workflows: map[string]Workflow{"develop.yml": {Dispatch: true}}})
	issue := s.AddIssue("work", "")

	resp, body := call(t, s, "POST", "/repos/o/r/issues/comments/7/reactions", `{"content":"+1"}`)
	if resp.StatusCode != 201 || strings.Join(s.Reactions(7), ",") != "+1" {
		t.Fatalf("reaction: %d %v %v", resp.StatusCode, body, s.Reactions(7))
	}
	resp, body = call(t, s, "POST", "/repos/o/r/issues/comments/7/reactions", `{"content":"thumbsup"}`)
	wantError(t, resp, body, 422, "Validation Failed")
	resp, body = call(t, s, "POST", "/repos/o/r/issues/comments/7/reactions", `{"content":"+1"}`, "Bearer ro")
	wantError(t, resp, body, 403, "Resource not accessible by integration")

	// Only a collaborator is assigned; GitHub drops anyone else silently.
	resp, _ = call(t, s, "POST", "/repos/o/r/issues/"+strconv.Itoa(issue)+"/assignees", `{"assignees":["ada","stranger"]}`)
	if resp.StatusCode != 201 || strings.Join(s.Assignees(issue), ",") != "ada" {
		t.Fatalf("assignees: %d %v", resp.StatusCode, s.Assignees(issue))
	}
	resp, body = call(t, s, "POST", "/repos/o/r/issues/999/assignees", `{"assignees":["ada"]}`)
	wantError(t, resp, body, 404, "Not Found")
	resp, body = call(t, s, "POST", "/repos/o/r/pulls/"+strconv.Itoa(issue)+"/requested_reviewers", `{"reviewers":["ada"]}`)
	wantError(t, resp, body, 404, "Not Found") // an issue is no pull request

	s.mu.Lock()
	s.issues[issue].Labels = []string{"needs-input"}
	s.mu.Unlock()
	other := s.AddIssue("other", "")
	req, _ := http.NewRequest("GET", s.URL+"repos/o/r/issues?labels=needs-input&state=open", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	lresp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ Number int }
	err = json.NewDecoder(lresp.Body).Decode(&list)
	lresp.Body.Close()
	if err != nil || len(list) != 1 || list[0].Number != issue || other == issue {
		t.Fatalf("issues labelled needs-input: %+v (%v)", list, err)
	}

	id, err := s.AddRun("develop.yml", "schedule")
	if err != nil {
		t.Fatal(err)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/actions/runs/"+strconv.FormatInt(id, 10)+"/rerun", "")
	wantError(t, resp, body, 403, "already running")
	if err := s.Complete(id, "failure"); err != nil {
		t.Fatal(err)
	}
	resp, _ = call(t, s, "POST", "/repos/o/r/actions/runs/"+strconv.FormatInt(id, 10)+"/rerun", "")
	if r, _ := s.Run(id); resp.StatusCode != 201 || s.Reruns(id) != 1 || r.Status != "queued" {
		t.Fatalf("rerun: %d, reruns %d, status %s", resp.StatusCode, s.Reruns(id), r.Status)
	}
	resp, body = call(t, s, "POST", "/repos/o/r/actions/runs/1/rerun", "")
	wantError(t, resp, body, 404, "Not Found")
}
