package effect

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A step playbook (seed 002) that is an actor's behavior runs in its agent job through
// `autonomy playbook run`. When a step's @elicit parks the run, the agent job uploads the run's
// state, and a trusted job posts the elicitation on the work item as an ask of the actor
// (EngageElicitation), whose marker carries the elicitation's kind. A maintainer answers it with
// the human seam's commands (Resolve checks that the verb fits the kind); the control workflow
// then dispatches the actor's workflow to resume the run, whose trusted resume job takes the
// answer from the maintainer's own command (ResumeAsk) and records the resume once (MarkResumed).

// Elicitation is what a step playbook's @elicit asks: Kind is input, confirm or select; Options
// are a select's.
type Elicitation struct {
	Kind    string
	Options []string
}

// marker is the elicitation's part of the ask marker ("" for a plain ask).
func (el *Elicitation) marker() string {
	if el == nil {
		return ""
	}
	s := " elicit=" + el.Kind
	if el.Kind == "select" {
		b, _ := json.Marshal(el.Options)
		s += " options=" + base64.RawURLEncoding.EncodeToString(b)
	}
	return s
}

// parseElicitation reads the marker's elicit= and options= (nil when the ask has none).
func parseElicitation(kind, options string) *Elicitation {
	if kind == "" {
		return nil
	}
	el := &Elicitation{Kind: kind}
	if b, err := base64.RawURLEncoding.DecodeString(options); err == nil && len(b) > 0 {
		_ = json.Unmarshal(b, &el.Options)
	}
	return el
}

// commands are the resolutions an ask offers, as "verb args".
func (el *Elicitation) commands() []string {
	switch {
	case el == nil:
		return []string{"approve", "reject <reason>", "answer <text>"}
	case el.Kind == "confirm":
		return []string{"approve", "reject <reason>"}
	case el.Kind == "select":
		return []string{"answer <option>", "reject <reason>"}
	}
	return []string{"answer <text>", "reject <reason>"}
}

// help says what the commands of an elicitation mean.
func (el *Elicitation) help() string {
	switch {
	case el == nil:
		return ""
	case el.Kind == "confirm":
		return "\n`approve` answers yes, `reject` answers no; the run then continues.\n"
	case el.Kind == "select":
		var b strings.Builder
		b.WriteString("\nThe options:\n\n")
		for _, o := range el.Options {
			b.WriteString("- " + o + "\n")
		}
		b.WriteString("\n`answer` with one of them continues the run; `reject` cancels it.\n")
		return b.String()
	}
	return "\n`answer` continues the run with your text; `reject` cancels it.\n"
}

// fits checks a resolution against the elicitation the ask carries (any fits a plain ask).
func (el *Elicitation) fits(verb, note string) error {
	if el == nil {
		return nil
	}
	note = strings.TrimSpace(note)
	switch {
	case verb == "reject":
		return nil
	case el.Kind == "confirm" && verb == "answer":
		if _, ok := YesNo(note); !ok {
			return fmt.Errorf("this ask is a yes/no question: `/agent approve TOKEN` answers yes, `/agent reject TOKEN <reason>` answers no (an answer says yes or no, not %q)", clipText(note))
		}
	case el.Kind == "confirm":
	case verb == "approve":
		return fmt.Errorf("this ask wants %s: `/agent answer TOKEN <%s>`, or `/agent reject TOKEN <reason>` to cancel the run",
			map[string]string{"select": "one of its options", "input": "your text"}[el.Kind], map[string]string{"select": "option", "input": "text"}[el.Kind])
	case el.Kind == "select":
		if !slices.ContainsFunc(el.Options, func(o string) bool { return strings.EqualFold(o, note) }) {
			return fmt.Errorf("%q is not one of the options: %s", clipText(note), strings.Join(el.Options, ", "))
		}
	}
	return nil
}

// YesNo reads a yes/no answer.
func YesNo(s string) (yes, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "y", "true":
		return true, true
	case "no", "n", "false":
		return false, true
	}
	return false, false
}

func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// CommandNote reads a maintainer's command comment "/agent VERB TOKEN [text]": ok when its
// first line is that command (the words compared as Resolve's marker names them), and the text
// after the token (the first line's rest and every line after it), trimmed.
func CommandNote(body, verb, token string) (string, bool) {
	first, rest, _ := strings.Cut(body, "\n")
	first = strings.TrimRight(first, "\r")
	f := strings.Fields(first)
	if len(f) < 3 || !strings.EqualFold(f[0], "/agent") || !strings.EqualFold(f[1], verb) || f[2] != token {
		return "", false
	}
	_, tail, _ := strings.Cut(first, token)
	return strings.TrimSpace(strings.TrimSpace(tail) + "\n" + rest), true
}

// EngageElicitation posts the elicitation of actor's paused step playbook run on work item n:
// the prompt, the commands that fit its kind (and a select's options), with the run's id in the
// marker (e.RunID: the run whose state the resume downloads).
func EngageElicitation(ctx context.Context, e *Env, actor string, n int, step, prompt string, el Elicitation) (*Ask, error) {
	switch el.Kind {
	case "input", "confirm", "select":
	default:
		return nil, fmt.Errorf("elicitation kind %q: want input, confirm or select", el.Kind)
	}
	if el.Kind == "select" && len(el.Options) == 0 {
		return nil, fmt.Errorf("the select of step %s has no options", step)
	}
	if e.RunID == "" {
		return nil, fmt.Errorf("GITHUB_RUN_ID is not set: the ask must name the run whose state resumes")
	}
	ask := fmt.Sprintf("The playbook of `%s` waits at step %s:\n\n> %s", actor, step, strings.ReplaceAll(strings.TrimSpace(prompt), "\n", "\n> "))
	return engage(ctx, e, actor, n, ask, "", &el)
}

// ResumeAsk finds the ask with token on work item n and checks that run's playbook may resume
// with it: it is an elicitation posted by run, resolved by a maintainer's verified command, and
// not resumed already. A refusal is a *Refused.
func ResumeAsk(ctx context.Context, e *Env, n int, token, run string) (*Ask, error) {
	asks, err := Asks(ctx, e, n)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(asks, func(a *Ask) bool { return a.Token == token })
	if i < 0 {
		return nil, &Refused{fmt.Sprintf("no ask on #%d has the token %s", n, token)}
	}
	a := asks[i]
	switch {
	case a.Elicit == nil:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d is not a playbook's elicitation: nothing resumes from it", token, n)}
	case a.RunID != run:
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d was posted by run %s, not run %s: a run resumes from its own ask only", token, n, a.RunID, run)}
	case a.Resolved == "":
		return nil, &Refused{fmt.Sprintf("the ask %s on #%d is still open: no maintainer's command has resolved it", token, n)}
	case a.ResumedBy != "":
		return nil, &Refused{fmt.Sprintf("the run of the ask %s on #%d was already resumed, by run %s: an answer resumes a run once", token, n, a.ResumedBy)}
	}
	return a, nil
}

// MarkResumed records on the ask's item that this run (e.RunID) resumed the ask's run.
func MarkResumed(ctx context.Context, e *Env, a *Ask) error {
	what := fmt.Sprintf("Resuming the playbook of %s with the maintainer's %s", a.Actor, a.Resolved)
	if a.Resolved == "reject" && a.Elicit != nil && a.Elicit.Kind != "confirm" {
		what = fmt.Sprintf("The maintainer's reject cancels the playbook of %s: no further step runs", a.Actor)
	}
	body := fmt.Sprintf("<!-- autonomy:resumed token=%s run=%s -->\n%s", a.Token, e.RunID, what)
	if e.RunURL != "" {
		body += " (" + e.RunURL + ")"
	}
	return e.comment(ctx, a.Item, body+".\n")
}
