//go:build unix

package effect_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
)

// labelValues adds to values the labels item carries in the fake, as the event's payload gives
// them to the jobs' conditions (github.event.issue.labels.*.name).
func (f *opsFleet) labelValues(item int, values map[string]string) map[string]string {
	is, _ := f.fake.Issue(item)
	b, _ := json.Marshal(append([]string{}, is.Labels...))
	values["github.event.issue.labels.*.name"] = string(b)
	return values
}

// TestPausedItemWorkflows: through the generated workflows, an item labelled autonomy:paused is
// left alone: a command or a plain comment on it fires no agent job (one on another item does);
// a run dispatched on it fails at its pause check, before the model proxy starts, and its apply
// job is skipped; the human
// actor's engage posts no ask on it; the sweep does not escalate its open ask, and does once the
// label is removed.
func TestPausedItemWorkflows(t *testing.T) {
	t.Parallel()
	f := newOps(t)
	item, other := f.items[0], f.items[1]

	// An ask on item, engaged while it is not paused.
	dispatch := func(n int) map[string]string {
		return map[string]string{"github.token": "ghs_ops", "github.event_name": "workflow_dispatch", "github.sha": f.sha, "github.ref": "refs/heads/main",
			"github.event.repository.default_branch": "main", "github.run_id": "4242", "github.actor": "pm",
			"inputs.ITEM": strconv.Itoa(n), "inputs.ASK": "May the release go out today?"}
	}
	if out, ran := f.r.job(f.wf("maintainer.yml"), "engage", dispatch(item), false); !ran {
		t.Fatalf("engage skipped\n%s", out)
	}
	m := tokenRe.FindStringSubmatch(f.last(item))
	if m == nil {
		t.Fatalf("no ask on #%d: %q", item, f.last(item))
	}
	if err := f.fake.Label(item, "ada", "autonomy:paused"); err != nil {
		t.Fatal(err)
	}

	// Events.
	for _, body := range []string{"/agent develop please", "a plain remark"} {
		if got := f.fired("issue_comment", f.labelValues(item, f.comment(item, "ada", "OWNER", body))); slices.ContainsFunc(got, func(j string) bool { return strings.HasSuffix(j, "/agent") }) {
			t.Errorf("%q on the paused #%d fired %v", body, item, got)
		}
		if got := f.fired("issue_comment", f.labelValues(other, f.comment(other, "ada", "OWNER", body))); !slices.ContainsFunc(got, func(j string) bool { return strings.HasSuffix(j, "/agent") }) {
			t.Errorf("%q on #%d fired no agent job: %v", body, other, got)
		}
	}

	// A dispatched run of develop on it: the agent job stops at its pause check, and its apply
	// job, which runs after a failed agent job, is skipped.
	run := dispatch(item)
	out, ran := f.r.job(f.wf("develop.yml"), "agent", run, true)
	if !ran || !strings.Contains(out, "is paused") || strings.Contains(out, "Start the model proxy") || strings.Contains(out, "Report the model usage") {
		t.Errorf("develop dispatched on the paused #%d: ran %v\n%s", item, ran, out)
	}
	if out, ran := f.r.job(f.wf("develop.yml"), "apply", run, true); ran {
		t.Errorf("develop's apply job ran after its pause check stopped the agent job:\n%s", out)
	}

	// The human actor's engage.
	n := len(f.comments(item))
	if out, _ := f.r.job(f.wf("maintainer.yml"), "engage", dispatch(item), true); !strings.Contains(out, "is paused") || len(f.comments(item)) != n {
		t.Errorf("engage on the paused #%d: comments %d → %d\n%s", item, n, len(f.comments(item)), out)
	}

	// The sweep, past the SLA: nothing while paused; escalation 1 once the label is gone.
	at, err := time.Parse(time.RFC3339, m[2])
	if err != nil {
		t.Fatal(err)
	}
	sweep := func() string {
		t.Helper()
		r := *f.r
		r.base = append(slices.Clone(f.r.base), "AUTONOMY_NOW="+at.Add(61*time.Minute).Format(time.RFC3339))
		out, ran := r.job(f.wf("autonomy-control.yml"), "sweep", map[string]string{"github.token": "ghs_ops", "github.event_name": "schedule", "github.sha": f.sha}, false)
		if !ran {
			t.Fatal("the sweep was skipped")
		}
		return out
	}
	if out := sweep(); len(f.comments(item)) != n || !strings.Contains(out, "is paused") {
		t.Errorf("the sweep escalated the ask of the paused #%d: %q\n%s", item, f.last(item), out)
	}
	client := github.NewClient(nil).WithAuthToken("ghs_ops")
	client.BaseURL, _ = url.Parse(strings.TrimSuffix(f.fake.URL, "/") + "/")
	if _, err := client.Issues.RemoveLabelForIssue(context.Background(), "o", "r", item, "autonomy:paused"); err != nil {
		t.Fatal(err)
	}
	if out := sweep(); !strings.Contains(f.last(item), "autonomy:escalation") {
		t.Errorf("the sweep did not escalate once #%d was unpaused: %q\n%s", item, f.last(item), out)
	}
}
