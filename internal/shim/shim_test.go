package shim

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/tools"
)

func readFile(name string) ([]byte, error) {
	if name == "body.md" {
		return []byte("from a file"), nil
	}
	return nil, errors.New("no such file")
}

func TestGHMaps(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Call
	}{
		{"issue view 12", Call{Pass: true}},
		{"pr diff 3 --name-only", Call{Pass: true}},
		{"search issues bug", Call{Pass: true}},
		{"--version", Call{Pass: true}},
		{"api repos/o/r/issues", Call{Pass: true}},
		{"api repos/o/r/issues?state=open", Call{Pass: true}},
		{"issue comment 12 --body hi", Call{Tool: tools.Comment, Input: tools.CommentInput{Item: "12", Body: "hi"}}},
		{"issue comment #12 -b hi", Call{Tool: tools.Comment, Input: tools.CommentInput{Item: "12", Body: "hi"}}},
		{"pr comment https://github.com/o/r/pull/7 --body=hi", Call{Tool: tools.Comment, Input: tools.CommentInput{Item: "7", Body: "hi"}}},
		{"issue comment 12 -F body.md", Call{Tool: tools.Comment, Input: tools.CommentInput{Item: "12", Body: "from a file"}}},
		{"issue create --title T --body B -l bug,ready", Call{Tool: tools.CreateItem, Input: tools.NewItem{Title: "T", Body: "B", Labels: []string{"bug", "ready"}}}},
		{"issue edit 12 --add-label ready --remove-label triage", Call{Tool: tools.SetState, Input: tools.StateChange{Item: "12"}, AddLabels: []string{"ready"}, RemoveLabels: []string{"triage"}}},
		{"workflow run develop.yml -f ISSUE=12 --ref main", Call{Tool: tools.Launch, Input: tools.LaunchInput{Params: map[string]string{"ISSUE": "12"}}, Workflow: "develop.yml",
			Notes: []string{"--ref main is ignored: a launch runs on the default branch"}}},
	} {
		got, err := GH(strings.Fields(tc.line), readFile)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("gh %s = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

func TestGHRefuses(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"pr create --title x --body y", "propose tool"},
		{"pr merge 3 --auto", "propose"},
		{"pr review 3 --approve", "submit_verdict"},
		{"issue close 3", "set_state"},
		{"run cancel 9", "cancel_session"},
		{"repo delete", "not a command the shim reads or maps"},
		{"api -X POST repos/o/r/issues", "writes"},
		{"api repos/o/r/issues -f title=x", "writes"},
		{"api -X GET repos/o/r/issues -f state=open", "writes"},
		{"api --method=PATCH repos/o/r/issues/1", "writes"},
		{"issue comment 12", "--body"},
		{"issue comment --body hi", "name one issue"},
		{"issue comment 1 2 --body hi", "name one issue"},
		{"issue comment abc --body hi", `"abc" is not an issue`},
		{"issue comment 12 --body", "needs a value"},
		{"issue comment 12 --body a --body b", "given 2 times"},
		{"issue comment 12 --body a -F body.md", "not both"},
		{"issue comment 12 -F missing.md", "no such file"},
		{"issue comment 12 --body hi --edit-last", "--edit-last is not one"},
		{"issue comment 12 --body hi -R other/repo", "this repository only"},
		{"issue edit 12 --remove-label triage", "exactly one"},
		{"issue edit 12 --add-label a,b", "exactly one"},
		{"issue edit 12 --add-label ready --title x", "--title is not one"},
		{"workflow run -f ISSUE=1", "name one workflow"},
		{"workflow run develop.yml -f issue=1", "NAME=VALUE"},
		{"workflow run develop.yml -f ISSUE", "NAME=VALUE"},
		{"workflow run develop.yml -f ISSUE=1 -f ISSUE=2", "twice"},
		{"workflow run develop.yml --json", "--json"},
	} {
		_, err := GH(strings.Fields(tc.line), readFile)
		var r *Refusal
		if !errors.As(err, &r) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "docs/tools.md") {
			t.Errorf("gh %s: %v, want a refusal saying %q", tc.line, err, tc.want)
		}
	}
}

func TestBunMaps(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Call
	}{
		{"install", Call{Pass: true}},
		{"test", Call{Pass: true}},
		{"scripts/other.ts launch develop", Call{Pass: true}},
		{"scripts/runner.ts launch develop --ref 12", Call{Tool: tools.Launch, Input: tools.LaunchInput{Actor: "develop", Subject: "12", Params: map[string]string{}}}},
		{"run ./scripts/runner.ts launch audit --MODE setup --ref=4 --branch agent/issue-4", Call{Tool: tools.Launch,
			Input:  tools.LaunchInput{Actor: "audit", Subject: "4", Params: map[string]string{"MODE": "setup"}},
			Branch: "agent/issue-4"}},
	} {
		got, err := Bun(strings.Fields(tc.line))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("bun %s = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

func TestBunRefuses(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"scripts/runner.ts", "name a verb"},
		{"scripts/runner.ts list", "list_sessions"},
		{"scripts/runner.ts cancel 9", "cancel_session"},
		{"scripts/runner.ts pause 9", "update_session"},
		{"scripts/runner.ts frobnicate", "not a verb"},
		{"scripts/runner.ts launch", "name the actor"},
		{"scripts/runner.ts launch --ref 3", "name the actor"},
		{"scripts/runner.ts launch develop extra", "unexpected"},
		{"scripts/runner.ts launch develop --ref", "needs a value"},
		{"scripts/runner.ts launch develop --ref 1 --ref 2", "twice"},
		{"scripts/runner.ts launch develop --mode x", "NAME=VALUE"},
		{"scripts/runner.ts launch develop --MODE a --MODE b", "twice"},
		{"scripts/runner.ts launch develop --branch a --branch b", "--branch is given twice"},
		{"scripts/runner.ts launch develop --branch=", "--branch needs a branch name"},
	} {
		_, err := Bun(strings.Fields(tc.line))
		var r *Refusal
		if !errors.As(err, &r) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bun %s: %v, want a refusal saying %q", tc.line, err, tc.want)
		}
	}
}

// TestGHFlagsCannotHideAWrite: grouped short flags and flags before the command are read as gh
// reads them (attack review).
func TestGHFlagsCannotHideAWrite(t *testing.T) {
	for _, args := range [][]string{
		{"api", "-iX", "POST", "repos/o/r/issues"},
		{"api", "-iXPOST", "repos/o/r/issues"},
		{"api", "-iF", "title=x", "repos/o/r/issues"},
		{"api", "-if", "body=x", "repos/o/r/issues/1/comments"},
		// A flag that takes a value takes the next word even when it starts with '-', as gh's
		// parser reads it: the -XGET or --method=GET after it is that value, not a method.
		{"api", "repos/o/r/issues/1/comments", "-t", "-XGET", "-f", "body=pwned"},
		{"api", "repos/o/r/issues/1/comments", "--jq", "--method=GET", "-f", "body=pwned"},
		{"api", "graphql", "-H", "-XGET", "-f", "query=mutation{x}"},
		{"api", "repos/o/r/issues/1/comments", "-p", "-XGET", "-F", "body=pwned"},
		{"api", "repos/o/r/issues", "-XGET", "--input", "body.json"},
		{"api", "repos/o/r/issues", "--cache", "-XGET", "--raw-field=body=x"},
		{"api", "repos/o/r/issues", "--nonsense", "-XGET"},
		{"api", "repos/o/r/issues", "-Z"},
		{"api", "repos/o/r/issues", "-X"},
		{"-R", "o/r", "issue", "close", "3"},
		{"--repo=o/r", "pr", "merge", "3", "--auto"},
	} {
		if c, err := GH(args, nil); err == nil || c.Pass {
			t.Errorf("gh %q passed: %+v", args, c)
		}
	}
	for _, args := range [][]string{{"--version"}, {"api", "-i", "repos/o/r"}, {"api", "-iX", "GET", "repos/o/r"},
		{"api", "repos/o/r/issues", "-q", ".[].title", "--paginate"}, {"api", "-t", "{{.title}}", "repos/o/r/issues/1"},
		{"api", "-H", "Accept: application/vnd.github.raw", "--method=get", "repos/o/r/readme"}, {"api", "--", "-f"}} {
		if c, err := GH(args, nil); err != nil || !c.Pass {
			t.Errorf("gh %q: %+v %v, want a read passed on", args, c, err)
		}
	}
}
