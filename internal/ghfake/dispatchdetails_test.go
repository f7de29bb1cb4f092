package ghfake

import (
	"fmt"
	"testing"
	"time"
)

// TestDispatchRunDetails: asked for return_run_details, a dispatch answers 200 with the run's id
// and URLs (the run exists at once, whatever Visibility says); not asked, or with
// DispatchNoContent, it answers 204 as before.
func TestDispatchRunDetails(t *testing.T) {
	s := newServer(t, Options{Visibility: time.Hour})
	resp, body := dispatch(t, s, "develop.yml", `{"ref":"main","inputs":{"ISSUE":"1"},"return_run_details":true}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, body %v", resp.StatusCode, body)
	}
	runs := s.Runs()
	if len(runs) != 1 || !runs[0].Visible {
		t.Fatalf("runs %+v", runs)
	}
	id := runs[0].ID
	if body["workflow_run_id"] != float64(id) ||
		body["run_url"] != fmt.Sprintf("%srepos/o/r/actions/runs/%d", s.URL, id) ||
		body["html_url"] != fmt.Sprintf("https://github.com/o/r/actions/runs/%d", id) {
		t.Errorf("body %v for run %d", body, id)
	}
	if resp, _ := call(t, s, "GET", fmt.Sprintf("/repos/o/r/actions/runs/%d", id), ""); resp.StatusCode != 200 {
		t.Errorf("the named run is not there: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		opts Options
		body string
	}{
		{Options{}, `{"ref":"main","inputs":{"ISSUE":"2"}}`},
		{Options{DispatchNoContent: true}, `{"ref":"main","inputs":{"ISSUE":"3"},"return_run_details":true}`},
	} {
		s := newServer(t, tc.opts)
		if resp, body := dispatch(t, s, "develop.yml", tc.body); resp.StatusCode != 204 || len(body) != 0 {
			t.Errorf("%+v %s: status %d, body %v", tc.opts, tc.body, resp.StatusCode, body)
		}
	}
}
