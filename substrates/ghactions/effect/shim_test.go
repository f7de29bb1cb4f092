package effect

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/internal/tools"
)

func shimSession(t *testing.T) *ShimSession {
	t.Helper()
	m, err := ReadInstalled([]byte(`{"actors": [
		{"name": "pm", "workflow": ".github/workflows/pm.yml", "capabilities": ["agent:launch@develop", "tasks:author", "tasks:converse"]},
		{"name": "develop", "workflow": ".github/workflows/develop.yml", "capabilities": ["code:propose"],
		 "triggers": [{"kind": "dispatch", "params": ["ISSUE"]}], "params": [{"name": "ISSUE", "source": "subject.ref"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := &ShimSession{Installed: m, Session: "1", Outputs: filepath.Join(t.TempDir(), "outputs.jsonl")}
	s.Policy.Box.TaskStates = map[string]string{"open": "triage"}
	s.Policy.Box.GHActions.Tools.Max = map[string]int{"comment": 1}
	s.Actor, _ = m.Actor("pm")
	return s
}

func TestShimResolve(t *testing.T) {
	s := shimSession(t)
	for _, tc := range []struct {
		line string
		want any
		err  string
	}{
		{"workflow run develop.yml -f ISSUE=3", tools.LaunchInput{Actor: "develop", Params: map[string]string{"ISSUE": "3"}}, ""},
		{"workflow run develop -f ISSUE=3", tools.LaunchInput{Actor: "develop", Params: map[string]string{"ISSUE": "3"}}, ""},
		{"workflow run ci.yml", nil, `workflow "ci.yml" is not the workflow of an actor`},
		{"issue edit 3 --add-label triage --remove-label ready", tools.StateChange{Item: "3", State: "open"}, ""},
		{"issue edit 3 --add-label ready", tools.StateChange{Item: "3", State: "ready"}, ""},
		{"issue edit 3 --add-label bug", nil, `label "bug" is not a lifecycle state's label (triage, ready`},
		{"issue edit 3 --add-label ready --remove-label bug", nil, `label "bug" is not a lifecycle state's label`},
	} {
		c, err := shim.GH(strings.Fields(tc.line), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Resolve(c)
		var refused *tools.Refused
		if tc.err != "" {
			if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("gh %s: %v, want refused with %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("gh %s = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

// Record counts what the session already recorded against the caps: each shim is a process of
// its own, sharing the safe-output file with the MCP server.
func TestShimRecordCountsTheFile(t *testing.T) {
	s := shimSession(t)
	comment := tools.CommentInput{Item: "3", Body: "hi"}
	if err := s.Record(tools.Comment, comment); err != nil {
		t.Fatal(err)
	}
	var refused *tools.Refused
	if err := s.Record(tools.Comment, comment); !errors.As(err, &refused) || !strings.Contains(err.Error(), "already used its 1 comment") {
		t.Errorf("a second comment: %v, want the cap", err)
	}
	if err := s.Record(tools.Launch, tools.LaunchInput{Actor: "reviewer"}); !errors.As(err, &refused) || !strings.Contains(err.Error(), `may not act on "reviewer"`) {
		t.Errorf("a launch outside the scope: %v", err)
	}
	if err := s.Record(tools.Launch, tools.LaunchInput{Actor: "develop", Subject: "3"}); err != nil {
		t.Fatal(err)
	}
}
