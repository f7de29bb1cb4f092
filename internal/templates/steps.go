package templates

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/ir"
)

// Trial is what a template's first local trial runs: the agent actor to launch, and what its
// session needs beyond the scripted model's default answer.
type Trial struct {
	// Actor is the actor to launch ("" when the profile has none).
	Actor string
	// NoModel: the actor's session asks no model (a workflow playbook of cli steps), so no
	// scripted model or model credential is set up.
	NoModel bool
	// Ref and Text are the launch's --ref (subject.ref) and --text (subject.text), "" for none.
	Ref, Text string
	// Script is the scripted model's script, one YAML line a turn, for a trial whose agent must
	// answer something in particular ("" for the default answer).
	Script []string
	// Answer is how the person answers what the session waits for (an approval, an @elicit), or
	// the ask it makes of Person: runner update's flags after --token T, "" when it waits for no one.
	Answer string
	// Person is the human actor the session asks (its scripted model launches it: the human
	// seam), "" for none: the steps then find that ask in runner list, take its token from where
	// the runner keeps it for the person, and answer it with Answer.
	Person string
	// History: the session reads the repository's history (a playbook step diffs it), which a
	// repository just made with git init does not have yet: the steps commit first.
	History bool
	// Worktrees: its agents work in worktrees of the repository (they propose), which start from
	// a commit: the steps commit first, as for History.
	Worktrees bool
}

// trials are the templates' trials, beyond launching their first agent actor with the default
// answer (TestInitNextStepsEndDone runs every one, as printed).
var trials = map[string]Trial{
	"release-gate": {NoModel: true, Answer: "--approve", History: true},
	// The requester asks the approver (a person: you) to decide request 1, as its skill does with
	// the launch tool and the ASK param; you answer the ask.
	"hello-human": {Person: "approver", Answer: "--status done --evidence 'read request 1: approved'", Script: []string{
		`- {tool: launch, args: {actor: approver, subject: "1", params: {ASK: "Approve or decline: request 1 (a trial request)."}}}`,
		`- json: {status: done, summary: Asked the approver to decide request 1.}`,
	}},
	"sdlc":         {Worktrees: true},
	"steps-triage": {Ref: "1", Text: "The app loses my draft when I rotate the phone.", Script: []string{"- text: major"}, Answer: "--answer api"},
}

// TrialOf is the trial of the template name, launching actor.
func TrialOf(name, actor string) Trial {
	t := trials[name]
	t.Actor = actor
	return t
}

// NextSteps is what to run after init for target, one command or note a line: dir is the new
// profile, trial its first local trial.
func NextSteps(dir, target string, trial Trial) []string {
	q := cliout.ShellWord(dir)
	switch target {
	case "local":
		return localSteps(q, trial)
	case "gh-actions":
		steps := []string{
			"autonomy compile " + q + " --target gh-actions --dir .",
			"git add -A && git commit -m 'autonomy fleet' && git push",
			"GH_TOKEN=$(gh auth token) autonomy provision " + q + " --repo OWNER/NAME   # the labels, variables and environments the fleet reads",
		}
		if !trial.NoModel {
			steps = append(steps, "gh secret set OPENAI_API_KEY   # the model credential of the agent jobs")
		}
		return append(steps, "# the whole checklist: https://github.com/autonomyhq/autonomy/blob/main/docs/gh-actions.md#setup-checklist")
	}
	return []string{"autonomy compile " + q + " --target " + target + " --dir ."}
}

// localSteps are the local target's next steps: compile, the scripted model when the trial asks
// one, doctor, the launch and, when the session waits for a person, its answer.
func localSteps(q string, trial Trial) []string {
	steps := []string{"autonomy compile " + q + " --target local --dir ."}
	// An empty commit, and only where there is none: nothing of the repository's is added.
	first := "git rev-parse -q --verify HEAD >/dev/null || git commit -q --allow-empty -m 'first commit'"
	switch {
	case trial.History:
		steps = append(steps, first+"   # its playbook reads the repository's history: a new repository needs a first commit")
	case trial.Worktrees:
		steps = append(steps, first+"   # its agents work in worktrees of the repository, which start from a commit")
	}
	if trial.Actor == "" {
		return append(steps, "autonomy doctor .")
	}
	if !trial.NoModel {
		// The model first: doctor checks the credential a session needs.
		model := "autonomy dev model --addr 127.0.0.1:0 --env-file model.env"
		if len(trial.Script) > 0 {
			words := make([]string, len(trial.Script))
			for i, l := range trial.Script {
				words[i] = cliout.ShellWord(l)
			}
			steps = append(steps, "printf '%s\\n' "+strings.Join(words, " ")+" > trial.yml   # what the scripted model answers each of the agent's sessions")
			model += " --script trial.yml"
		}
		steps = append(steps,
			model+"   # in a second terminal: a scripted model, for a trial with no model account (docs/quickstart.md)",
			"export $(cat model.env) OPENAI_API_KEY=trial")
	}
	steps = append(steps, "autonomy doctor .")
	launch := "autonomy runner launch " + trial.Actor
	if trial.Ref != "" {
		launch += " --ref " + cliout.ShellWord(trial.Ref)
	}
	if trial.Text != "" {
		launch += " --text " + cliout.ShellWord(trial.Text)
	}
	if trial.Answer == "" {
		return append(steps, launch, "autonomy runner list --all")
	}
	if trial.Person != "" {
		return append(steps,
			launch+"   # its model launches the "+trial.Person+": an ask to you, a person",
			"autonomy runner list   # the "+trial.Person+"'s session, WAITING FOR \""+trial.Person+" (a person): …\", is the ask: its ID, and its token T in "+askTokenFile,
			"autonomy runner update ID --token T "+trial.Answer+"   # you answer the ask (--status failed declines it)",
			"autonomy runner list --all")
	}
	return append(steps,
		launch+"   # prints the session's ID",
		"autonomy runner logs ID   # once runner list shows it WAITING FOR you, its log ends with the command that answers it, and the token T",
		"autonomy runner update ID --token T "+trial.Answer+"   # in a shell where the model's variables are exported too: the answer goes on with the run there",
		"autonomy runner list --all")
}

// askTokenFile is where the local runner keeps, for the person, the token of an ask a session
// made (local.AskDir; local.Install.TokenFile).
const askTokenFile = ".autonomy/state/asks/ID.token"

// roleNotes says what each governing document role holds, for the step that writes it.
var roleNotes = map[string]string{
	"vision":       "why the project exists and where it is heading (the agents judge scope against it)",
	"constitution": "what the project never does, the rules every change keeps",
	"roadmap":      "what comes next, under ## Now, ## Next and ## Later, one bullet per item (the agents plan from it)",
}

// DocumentSteps are what to run after init, before any target's steps, when the profile names
// governing documents (documents.roles): each document's folder made, the document opened in the
// user's editor, saying what to write, and all of them committed, since the agents read them
// from the repository (and compile warns while one is missing). None when it names none.
func DocumentSteps(documents []ir.Role) []string {
	if len(documents) == 0 {
		return nil
	}
	var folders, edits, paths []string
	for _, d := range documents {
		rel := d.Path.Value
		if strings.HasPrefix(rel, "-") {
			rel = "./" + rel // a path, never an option of mkdir, the editor or git
		}
		p := cliout.ShellWord(rel)
		if folder := path.Dir(rel); folder != "." && !slices.Contains(folders, folder) {
			folders = append(folders, folder)
		}
		note := roleNotes[d.Name.Value]
		if note == "" {
			note = "a document the agents read"
		}
		edits = append(edits, `"${EDITOR:-vi}" `+p+"   # the "+d.Name.Value+": "+note)
		paths = append(paths, p)
	}
	var steps []string
	for _, f := range folders {
		steps = append(steps, "mkdir -p "+cliout.ShellWord(f))
	}
	steps = append(steps, edits...)
	return append(steps, "git add "+strings.Join(paths, " ")+" && git commit -m 'the governing documents of the fleet'")
}

// Ask asks, on a terminal, which template and which target: a number or a name, an empty answer
// taking the default shown. It reads at most one line per question.
func Ask(in io.Reader, out io.Writer) (name, target string, err error) {
	r := bufio.NewReader(io.LimitReader(in, 4096))
	list := List()
	fmt.Fprintln(out, "Templates:")
	for i, t := range list {
		fmt.Fprintf(out, "  %d. %-13s %s (%s)\n", i+1, t.Name, t.Summary, strings.Join(t.Targets, ", "))
	}
	name, err = choose(r, out, "Template", Default, Names())
	if err != nil {
		return "", "", err
	}
	t, _ := Lookup(name)
	options := append([]string{"all"}, t.Targets...)
	target, err = choose(r, out, "Target ("+strings.Join(options, ", ")+")", "all", options)
	if target == "all" {
		target = ""
	}
	return name, target, err
}

// choose asks one question until the answer is one of valid (or its 1-based number).
func choose(r *bufio.Reader, out io.Writer, question, def string, valid []string) (string, error) {
	for {
		fmt.Fprintf(out, "%s [%s]: ", question, def)
		line, err := r.ReadString('\n')
		answer := strings.TrimSpace(line)
		if answer == "" && err != nil {
			return "", fmt.Errorf("no answer to %q: %w", question, err)
		}
		if answer == "" {
			return def, nil
		}
		if n, convErr := strconv.Atoi(answer); convErr == nil && n >= 1 && n <= len(valid) {
			return valid[n-1], nil
		}
		for _, v := range valid {
			if v == answer {
				return v, nil
			}
		}
		fmt.Fprintf(out, "  %q is not one of %s\n", answer, strings.Join(valid, ", "))
		if err != nil {
			return "", fmt.Errorf("no answer to %q: %w", question, err)
		}
	}
}
