package ghevent

import (
	"strings"
	"testing"
)

func TestCommandText(t *testing.T) {
	for body, want := range map[string]string{
		"/agent reviewer":                 "",
		"/agent reviewer   look at #4":    "look at #4",
		"/agent reviewer\r\n\tthe text\n": "the text\n",
		"/Agent REVIEWER go":              "go",
		"/agent revıewer look":            "look", // dotless i: upper case I, two bytes for one
	} {
		if got := CommandText(body, "reviewer"); got != want {
			t.Errorf("CommandText(%q) = %q, want %q", body, got, want)
		}
	}
}

func TestTrusted(t *testing.T) {
	if Trusted("issue_comment", "created", "NONE", false, TrustedRoles) {
		t.Error("an outsider's comment is trusted")
	}
	if !Trusted("issue_comment", "created", "MEMBER", false, TrustedRoles) {
		t.Error("a member's comment is not trusted")
	}
	if !Trusted("issues", "labeled", "NONE", false, TrustedRoles) {
		t.Error("labeling takes triage access, yet it is gated on the issue's author")
	}
	if !Trusted("pull_request_target", "opened", "NONE", true, TrustedRoles) {
		t.Error("a same-repository pull request is not trusted")
	}
	if !Trusted("push", "", "", false, nil) {
		t.Error("push needs write access, yet it is gated")
	}
}

// TestItemNumberTakesOneSpelling: a work item's number is read only as GitHub spells it.
func TestItemNumberTakesOneSpelling(t *testing.T) {
	if n, err := ItemNumber("42"); n != 42 || err != nil {
		t.Errorf("42: %d, %v", n, err)
	}
	for _, s := range []string{"+42", "042", "0x2A", " 42", "42 ", "4_2", "#42", "0", "-1", "", "99999999999999999999"} {
		if n, err := ItemNumber(s); err == nil || !strings.Contains(err.Error(), "like 42") {
			t.Errorf("%q: %d, %v: want it refused, saying how to write it", s, n, err)
		}
	}
}

// Command is the widest of the parsers' tests: every body Addressed reads as a command, and the
// control job's tab and lone carriage return after /agent.
func TestCommand(t *testing.T) {
	for body, want := range map[string]bool{
		"/agent approve 0123":      true,
		"/AGENT reviewer go":       true,
		"/agent":                   true,
		"/agent\n":                 true,
		"/agent\r\nsecond":         true,
		"/agent\r":                 true,
		"/agent\tcancel 7":         true,
		"/agentstatus":             false,
		" /agent status":           false,
		"please /agent status":     false,
		"> /agent approve abc":     false,
		"/age":                     false,
		"":                         false,
		"thanks\n/agent approve x": false,
	} {
		if got := Command(body); got != want {
			t.Errorf("Command(%q) = %v, want %v", body, got, want)
		}
		if Addressed(body, "") && !Command(body) {
			t.Errorf("Addressed(%q) but not Command", body)
		}
	}
}

// CommandLine finds a command on any line, after leading white space; /agent within a sentence,
// quoted or in backticks is none.
func TestCommandLine(t *testing.T) {
	for body, want := range map[string]int{
		"/agent approve abc":                          1,
		"looks good\n\n/agent approve abc":            3,
		"   /agent approve abc":                       1,
		"ok\n\t/Agent retry 5":                        2,
		"ok\r/agent cancel 5":                         1,
		"ok\u00a0\n\u2003/agent status":               2,
		"run /agent approve TOKEN to approve":         0,
		"> /agent approve abc":                        0,
		"use `/agent approve` with the token":         0,
		"the /agents directory\n/agents are fine too": 0,
	} {
		if got, line := CommandLine(body); got != want {
			t.Errorf("CommandLine(%q) = %d (%q), want %d", body, got, line, want)
		}
	}
}
