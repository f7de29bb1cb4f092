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
