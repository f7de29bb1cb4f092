// Package ghevent is the one reading of GitHub's events that both substrates share: which
// payload object carries an event's subject and its author, which activity an outsider can
// take on their own item (and so must be gated on the author's association), which
// associations are trusted, and how a comment addresses an actor with "/agent <actor>". The
// gh-actions compiler turns it into workflow expressions; the local event source applies it
// to what it polls.
package ghevent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrustedRoles are the author_association values trusted by default on events any outsider
// can fire.
var TrustedRoles = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// AllRoles are every author_association GitHub reports.
var AllRoles = []string{"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER", "MANNEQUIN", "NONE"}

// AuthorObject is the payload object whose author_association gates event and whose body is
// its subject.text: "comment", "review", "pull_request", "issue" or "discussion"; "" when the
// event carries none.
func AuthorObject(event string) string {
	switch event {
	case "issue_comment", "discussion_comment", "pull_request_review_comment":
		return "comment"
	case "pull_request_review":
		return "review"
	case "pull_request", "pull_request_target":
		return "pull_request"
	case "issues":
		return "issue"
	case "discussion":
		return "discussion"
	}
	return ""
}

// SubjectObject is the payload object whose number is event's subject.ref: "issue",
// "pull_request" or "discussion"; "" when the event has no single subject.
func SubjectObject(event string) string {
	switch event {
	case "issues", "issue_comment":
		return "issue"
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		return "pull_request"
	case "discussion", "discussion_comment":
		return "discussion"
	}
	return ""
}

// AuthorActions are the activity types of event that an item's author takes on their own item
// (so anyone can fire them, and they are gated on the association); every other activity of the
// event takes triage access. nil when every activity is gated (or the event is not one of these).
func AuthorActions(event string) []string {
	switch event {
	case "issues":
		// Labeling, assigning or pinning takes triage access; an author opens, edits, closes
		// and reopens their own issue.
		return []string{"opened", "edited", "closed", "reopened", "deleted"}
	case "discussion":
		// An author creates, edits, deletes and marks answers on their own discussion.
		return []string{"created", "edited", "deleted", "answered", "unanswered"}
	}
	return nil
}

// Gated reports whether event is one any outsider can fire and whose firing the author's
// association (or, for a pull request, a same-repository head) must allow.
func Gated(event string) bool { return AuthorObject(event) != "" }

// Trusted reports whether an event (with its activity type action) may fire an actor: an event
// that needs no gate always; a pull request whose head is in this repository (sameRepo: pushed by
// someone with write access); an activity that takes triage access; otherwise only an author
// whose association is one of roles.
func Trusted(event, action, association string, sameRepo bool, roles []string) bool {
	if !Gated(event) {
		return true
	}
	if (event == "pull_request" || event == "pull_request_target") && sameRepo {
		return true
	}
	if self := AuthorActions(event); self != nil && !slices.Contains(self, action) {
		return true
	}
	return slices.Contains(roles, association)
}

// ControlVerbs are the control commands of "/agent <verb>": an actor of one of these names cannot
// be addressed by a comment.
var ControlVerbs = []string{"status", "cancel", "retry", "approve", "reject", "answer"}

// CommandPrefix is how a comment addresses name: "/agent name" ("/agent" for any command).
func CommandPrefix(name string) string { return strings.TrimSuffix("/agent "+name, " ") }

// Addressed reports whether a comment's body starts with "/agent <name>" followed by a space,
// a line break or its end, in any case ("/Agent Reviewer" too: GitHub's startsWith ignores
// case); Addressed(body, "") whether it is any /agent command. It is the test the generated
// workflows make in an expression (ghactions commandCond).
func Addressed(body, name string) bool {
	rest, ok := cutFoldPrefix(body, CommandPrefix(name))
	return ok && (rest == "" || rest[0] == ' ' || strings.HasPrefix(rest, "\n") || strings.HasPrefix(rest, "\r\n"))
}

// Command reports whether a comment's body is an /agent command to any of autonomy's command
// parsers: its first line, without the carriage returns that end it, starts with "/agent" in any
// case followed by a space, a tab or the line's end. It is the control job's test (autonomy gh
// control), and it holds for every body Addressed(body, name) holds for (the workflows' test and
// the local event source's), so it is the widest of them.
func Command(body string) bool {
	first, _, _ := strings.Cut(body, "\n")
	rest, ok := cutFoldPrefix(strings.TrimRight(first, "\r"), CommandPrefix(""))
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// CommandLine is the first line of body (numbered from 1) that is an /agent command by Command
// once its leading white space is removed, and that line; 0 when none is. It is wider than any
// parser, which reads only a body's first line from its first character: text the trusted side
// posts for a model is refused on it (internal/ghwrite), so that no trimming, rewrap or other
// reading of the body can make it a command either. "/agent" inside a sentence, after a quote's
// "> " or in backticks is not one.
func CommandLine(body string) (int, string) {
	for i, line := range strings.Split(body, "\n") {
		for _, part := range strings.Split(line, "\r") { // a lone carriage return breaks a line too
			if Command(strings.TrimLeftFunc(part, unicode.IsSpace)) {
				return i + 1, strings.TrimSpace(part)
			}
		}
	}
	return 0, ""
}

// CommandText is the text of an "/agent <name>" command: the body after the command, without
// the white space that follows it, as the generated workflows give subject.text.
func CommandText(body, name string) string {
	rest, ok := cutFoldPrefix(body, CommandPrefix(name))
	if !ok {
		rest = body[min(len(body), len(CommandPrefix(name))):]
	}
	return strings.TrimLeft(rest, " \t\r\n\v\f")
}

// cutFoldPrefix cuts prefix from the start of s ignoring case as GitHub's startsWith does
// (.NET's OrdinalIgnoreCase: each character's simple upper case), and reports whether s starts
// with it.
func cutFoldPrefix(s, prefix string) (string, bool) {
	for _, p := range prefix {
		r, n := utf8.DecodeRuneInString(s)
		if n == 0 || unicode.ToUpper(r) != unicode.ToUpper(p) {
			return "", false
		}
		s = s[n:]
	}
	return s, true
}

// ItemNumber reads s as a work item's number (an issue's or a pull request's), spelled as GitHub
// spells it: the decimal of a positive integer, with no sign, leading zero, space or separator.
// Any other spelling of the same number (+42, 042, 0x2A) is refused, so that one item has one
// name: one branch, one concurrency group, one pull request.
func ItemNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("%q is not a work item number: write the issue's or pull request's number in decimal, with no sign, leading zero, space or '#' (like 42)", s)
	}
	return n, nil
}
