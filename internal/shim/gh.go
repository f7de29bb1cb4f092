package shim

import (
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/tools"
)

// ReadFile reads a --body-file ("-" is standard input), bounded by the caller.
type ReadFile func(name string) ([]byte, error)

// ghReads are the gh subcommands that only read, by group: the shim passes them to the real
// gh, which holds the job's read-only token.
var ghReads = map[string][]string{
	"issue":    {"view", "list", "status"},
	"pr":       {"view", "list", "diff", "checks", "status"},
	"run":      {"view", "list", "watch", "download"},
	"workflow": {"view", "list"},
	"repo":     {"view"},
	"label":    {"list"},
	"release":  {"view", "list"},
	"auth":     {"status"},
	"search":   nil, // every search reads
	"status":   nil,
	"version":  nil,
	"help":     nil,
}

// ghInstead names the tool to use for a gh write the shim does not map.
var ghInstead = map[string]string{
	"pr create":      "the propose tool: commit in the workspace and call propose (title, body); the substrate pushes the branch and opens the pull request",
	"pr merge":       "nothing: a proposal merges itself once its review passes; propose your commits with the propose tool",
	"pr review":      "the submit_verdict tool (code:review)",
	"pr close":       "the comment tool to say why; closing is a maintainer's",
	"issue close":    "the set_state tool (done or rejected)",
	"issue reopen":   "the set_state tool (open)",
	"run cancel":     "the cancel_session tool (agent:cancel)",
	"run rerun":      "the update_session tool (agent:update)",
	"workflow run":   "the launch tool (agent:launch)",
	"label create":   "nothing: labels are the installation's",
	"issue delete":   "nothing: an agent deletes no work item",
	"issue transfer": "nothing: an agent moves no work item out of the repository",
}

// GH reads the words of a gh command line (without "gh").
func GH(args []string, readFile ReadFile) (Call, error) {
	if len(args) == 0 || len(args) == 1 && slices.Contains([]string{"--version", "--help", "-h"}, args[0]) {
		return Call{Pass: true}, nil // gh, gh --version, gh --help
	}
	if strings.HasPrefix(args[0], "-") {
		// gh finds its command past leading flags (gh -R o/r issue close 3): none is read here.
		return Call{}, refuse("gh "+args[0], "put the command first (gh issue view 3); a flag before it, --repo included, is not read")
	}
	group := args[0]
	sub := ""
	if len(args) > 1 {
		sub = args[1]
	}
	cmd := strings.TrimSpace("gh " + group + " " + sub)
	if group == "api" {
		return ghAPI(args[1:])
	}
	if reads, ok := ghReads[group]; ok && (reads == nil || slices.Contains(reads, sub) || sub == "" || sub == "--help") {
		return Call{Pass: true}, nil
	}
	rest := args[min(2, len(args)):]
	switch group + " " + sub {
	case "issue comment", "pr comment":
		return ghComment(cmd, rest, readFile)
	case "issue create":
		return ghCreate(cmd, rest, readFile)
	case "issue edit", "pr edit":
		return ghEdit(cmd, rest)
	case "workflow run":
		return ghWorkflowRun(cmd, rest)
	}
	if instead, ok := ghInstead[group+" "+sub]; ok {
		return Call{}, refuse(cmd, "this job holds no write token; use %s", instead)
	}
	return Call{}, refuse(cmd, "not a command the shim reads or maps; a write goes through the tools (comment, create_item, set_state, launch, propose)")
}

// ghAPIFlags are gh api's flags (gh 2.x, `gh api --help`), long name to whether it takes a value;
// ghAPIShort its short ones to their long names. gh's parser takes the word after a flag that
// takes a value as that value even when it starts with '-' (-t -XGET: -XGET is the template),
// so the shim must know which flags take one to read the command as gh does.
var (
	ghAPIFlags = map[string]bool{
		"method": true, "field": true, "raw-field": true, "header": true, "input": true, "jq": true,
		"template": true, "preview": true, "cache": true, "hostname": true,
		"include": false, "paginate": false, "silent": false, "slurp": false, "verbose": false, "help": false,
	}
	ghAPIShort = map[rune]string{'X': "method", 'F': "field", 'f': "raw-field", 'H': "header", 'q': "jq",
		't': "template", 'p': "preview", 'i': "include", 'h': "help"}
)

// ghAPIFlag reads the flag at args[i] as gh api's parser does: its long names and, for one that
// takes a value, that value (inline, else the next word, which is consumed: next is the index
// of the word after it). A group of short flags (-iXPOST) holds flags without a value, then at
// most one that takes one, its value the rest of the group or the next word.
func ghAPIFlag(args []string, i int) (names []string, value string, next int, err error) {
	w := args[i]
	if w[1] == '-' {
		name, v, inline := strings.Cut(w[2:], "=")
		takes, ok := ghAPIFlags[name]
		if !ok {
			return nil, "", 0, refuse("gh api", "--%s is not a flag the shim knows", name)
		}
		if takes && !inline {
			if i+1 >= len(args) {
				return nil, "", 0, refuse("gh api", "--%s needs a value", name)
			}
			return []string{name}, args[i+1], i + 2, nil
		}
		return []string{name}, v, i + 1, nil
	}
	for j, c := range w[1:] {
		name, ok := ghAPIShort[c]
		if !ok {
			return nil, "", 0, refuse("gh api", "-%c is not a flag the shim knows", c)
		}
		names = append(names, name)
		if !ghAPIFlags[name] {
			continue
		}
		if rest := w[2+j:]; rest != "" {
			return names, strings.TrimPrefix(rest, "="), i + 1, nil
		}
		if i+1 >= len(args) {
			return nil, "", 0, refuse("gh api", "-%c needs a value", c)
		}
		return names, args[i+1], i + 2, nil
	}
	return names, "", i + 1, nil
}

// ghAPI passes a read to gh api and refuses anything that may write: a method other than GET, or
// any field or input (-f, -F, --field, --raw-field, --input: gh POSTs them unless told GET, and
// a read needs none; put a query in the path).
func ghAPI(args []string) (Call, error) {
	writes := refuse("gh api", "this request writes (a method but GET, or fields or input gh would send), and this job holds no write token; use the tools (comment, create_item, set_state, launch) instead; for a read, put any query parameters in the path")
	for i := 0; i < len(args); {
		w := args[i]
		if w == "--" {
			break
		}
		if len(w) < 2 || w[0] != '-' {
			i++
			continue
		}
		names, value, next, err := ghAPIFlag(args, i)
		if err != nil {
			return Call{}, err
		}
		for _, name := range names {
			switch name {
			case "method":
				if strings.ToUpper(value) != "GET" {
					return Call{}, writes
				}
			case "field", "raw-field", "input":
				return Call{}, writes
			}
		}
		i = next
	}
	return Call{Pass: true}, nil
}

var bodySpec = spec{"body": {"b", true}, "body-file": {"F", true}, "repo": {"R", true}}

// body reads --body or --body-file, exactly one.
func body(cmd string, f flags, readFile ReadFile) (string, error) {
	b, err := f.one(cmd, "body")
	if err != nil {
		return "", err
	}
	file, err := f.one(cmd, "body-file")
	if err != nil {
		return "", err
	}
	if file != "" && b != "" {
		return "", refuse(cmd, "give --body or --body-file, not both")
	}
	if file == "" {
		return b, nil
	}
	data, err := readFile(file)
	if err != nil {
		return "", refuse(cmd, "--body-file %s: %v", file, err)
	}
	return string(data), nil
}

// noRepo refuses --repo: an effect acts on this repository only.
func noRepo(cmd string, f flags) error {
	if len(f.values["repo"]) > 0 {
		return refuse(cmd, "--repo: the tools act on this repository only")
	}
	return nil
}

func ghComment(cmd string, words []string, readFile ReadFile) (Call, error) {
	f, err := parse(cmd, words, bodySpec)
	if err != nil {
		return Call{}, err
	}
	if err := noRepo(cmd, f); err != nil {
		return Call{}, err
	}
	if len(f.args) != 1 {
		return Call{}, refuse(cmd, "name one issue or pull request, e.g. %s 12 --body 'text'", cmd)
	}
	n, err := item(cmd, f.args[0])
	if err != nil {
		return Call{}, err
	}
	b, err := body(cmd, f, readFile)
	if err != nil {
		return Call{}, err
	}
	if strings.TrimSpace(b) == "" {
		return Call{}, refuse(cmd, "give the comment with --body or --body-file")
	}
	return Call{Tool: tools.Comment, Input: tools.CommentInput{Item: n, Body: b}}, nil
}

func ghCreate(cmd string, words []string, readFile ReadFile) (Call, error) {
	sp := spec{"title": {"t", true}, "label": {"l", true}}
	for k, v := range bodySpec {
		sp[k] = v
	}
	f, err := parse(cmd, words, sp)
	if err != nil {
		return Call{}, err
	}
	if err := noRepo(cmd, f); err != nil {
		return Call{}, err
	}
	if len(f.args) != 0 {
		return Call{}, refuse(cmd, "unexpected %q; give --title and --body", f.args[0])
	}
	title, err := f.one(cmd, "title")
	if err != nil {
		return Call{}, err
	}
	b, err := body(cmd, f, readFile)
	if err != nil {
		return Call{}, err
	}
	return Call{Tool: tools.CreateItem, Input: tools.NewItem{Title: title, Body: b, Labels: f.list("label")}}, nil
}

func ghEdit(cmd string, words []string) (Call, error) {
	f, err := parse(cmd, words, spec{"add-label": {"", true}, "remove-label": {"", true}, "repo": {"R", true}})
	if err != nil {
		return Call{}, err
	}
	if err := noRepo(cmd, f); err != nil {
		return Call{}, err
	}
	if len(f.args) != 1 {
		return Call{}, refuse(cmd, "name one issue, e.g. %s 12 --add-label ready", cmd)
	}
	n, err := item(cmd, f.args[0])
	if err != nil {
		return Call{}, err
	}
	add, remove := f.list("add-label"), f.list("remove-label")
	if len(add) != 1 {
		return Call{}, refuse(cmd, "add exactly one lifecycle state's label (--add-label); the set_state tool moves an item to a state and takes the old state's label off itself")
	}
	return Call{Tool: tools.SetState, Input: tools.StateChange{Item: n}, AddLabels: add, RemoveLabels: remove}, nil
}

func ghWorkflowRun(cmd string, words []string) (Call, error) {
	f, err := parse(cmd, words, spec{"field": {"F", true}, "raw-field": {"f", true}, "ref": {"r", true}, "repo": {"R", true}, "json": {"", false}})
	if err != nil {
		return Call{}, err
	}
	if err := noRepo(cmd, f); err != nil {
		return Call{}, err
	}
	if len(f.values["json"]) > 0 {
		return Call{}, refuse(cmd, "--json: give the inputs with -f NAME=VALUE")
	}
	if len(f.args) != 1 {
		return Call{}, refuse(cmd, "name one workflow, e.g. %s develop.yml -f ISSUE=12", cmd)
	}
	params := map[string]string{}
	for _, name := range []string{"raw-field", "field"} {
		for _, kv := range f.values[name] {
			if err := param(cmd, "-f", kv, params); err != nil {
				return Call{}, err
			}
		}
	}
	var notes []string
	if r, _ := f.one(cmd, "ref"); r != "" {
		notes = append(notes, "--ref "+r+" is ignored: a launch runs on the default branch")
	}
	return Call{Tool: tools.Launch, Input: tools.LaunchInput{Params: params}, Workflow: f.args[0], Notes: notes}, nil
}
