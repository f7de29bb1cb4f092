package effect

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/internal/ghwrite"
	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// A typed ask (the ask_person tool's, package handoff) carries its type, and the options of a
// decision (base64url JSON), at the end of its marker:
//
//	<!-- autonomy:ask actor=NAME token=TOKEN at=RFC3339 run=RUNID type=decide choices=B64 -->
//
// Its resolution must fit the type: approve takes /agent approve or reject, decide /agent
// answer with one of the options (or reject: declined), consult /agent answer with the words
// handed back, inform /agent confirm (its receiver's receipt; it never waits, and is not work:
// no input-required label). The resolution records who (the verified maintainer) and what,
// as for any ask; on GitHub that resolution is also the receiver's confirmation.

// typedMarker is a typed ask's part of the marker ("" for any other ask).
func typedMarker(t *handoff.Spec) string {
	if t == nil {
		return ""
	}
	s := " type=" + t.Type
	if t.Decision != nil && len(t.Decision.Options) > 0 {
		b, _ := json.Marshal(t.Decision.Options)
		s += " choices=" + base64.RawURLEncoding.EncodeToString(b)
	}
	return s
}

// parseTyped reads the marker's type= and choices= (nil when the ask has none).
func parseTyped(typ, choices string) *handoff.Spec {
	if typ == "" {
		return nil
	}
	t := &handoff.Spec{Type: typ}
	var opts []string
	if b, err := base64.RawURLEncoding.DecodeString(choices); err == nil && len(b) > 0 {
		_ = json.Unmarshal(b, &opts)
	}
	if len(opts) > 0 {
		t.Decision = &handoff.Decision{Options: opts}
	}
	return t
}

// commands are the resolutions an ask offers, as "verb args".
func commands(el *Elicitation, t *handoff.Spec) []string {
	if t == nil {
		return el.commands()
	}
	switch {
	case t.Type == handoff.Inform:
		return []string{"confirm"}
	case t.Type == handoff.Consult:
		return []string{"answer <text>", "reject <reason>"}
	case t.Type == handoff.Approve && (t.Decision == nil || len(t.Decision.Options) == 0):
		return []string{"approve", "reject <reason>"}
	}
	return []string{"answer <option>", "reject <reason>"}
}

// typedHelp lists a decision's options and says what a typed ask's commands mean.
func typedHelp(t *handoff.Spec) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThis ask is a **%s**", t.Type)
	if t.Type == handoff.Inform {
		b.WriteString(": nothing waits on it; `confirm` records that you received it.\n")
		return b.String()
	}
	b.WriteString(".\n")
	if t.Decision != nil && len(t.Decision.Options) > 0 {
		b.WriteString("\nThe options:\n\n")
		for _, o := range t.Decision.Options {
			b.WriteString("- " + o + "\n")
		}
	}
	return b.String()
}

// typedFits checks a resolution against a typed ask (any fits an untyped one).
func typedFits(t *handoff.Spec, verb, note string) error {
	if t == nil {
		if verb == "confirm" {
			return fmt.Errorf("`confirm` answers an inform ask; this one is resolved with approve, reject or answer")
		}
		return nil
	}
	note = strings.TrimSpace(note)
	want := commands(nil, t)
	if !slices.ContainsFunc(want, func(c string) bool { return strings.HasPrefix(c, verb+" ") || c == verb }) {
		return fmt.Errorf("this ask is a %s: resolve it with /agent %s", t.Type, strings.Join(want, " or /agent "))
	}
	if verb == "answer" && t.Type != handoff.Consult {
		opts := t.Options()
		if !slices.Contains(opts, note) {
			return fmt.Errorf("%q is not one of the options: %s", clipText(note), strings.Join(opts, ", "))
		}
	}
	return nil
}

// applyAsk realizes ask_person: a typed ask of the person (a human actor of the manifest: the
// one named, or the only one) posted on the work item, as the engage job posts one.
func (e *Env) applyAsk(ctx context.Context, m *Installed, v *tools.Ask, staged bool) (string, error) {
	if v.Item == "" {
		return "", &tools.Refused{Tool: tools.AskPerson, Reason: "on GitHub an ask is a comment on a work item: give item (an issue or pull request number)"}
	}
	n, err := ghwrite.Number("item", v.Item)
	if err != nil {
		return "", err
	}
	person, err := m.person(v.Person)
	if err != nil {
		return "", err
	}
	spec := v.Spec()
	if staged {
		return fmt.Sprintf("would ask %s on #%d (%s)", person, n, spec.Type), nil
	}
	var b strings.Builder
	b.WriteString(tools.Neutralize(v.Question) + "\n")
	if spec.In != "" {
		b.WriteString("\n**In** (what the asker hands over):\n\n" + quote(tools.Neutralize(spec.In)) + "\n")
	}
	if spec.Out != "" {
		b.WriteString("\n**Out** (what to hand back): " + tools.Neutralize(spec.Out) + "\n")
	}
	marker := &handoff.Spec{Type: spec.Type, Decision: spec.Decision}
	a, err := engage(ctx, e, person, n, b.String(), "", nil, "", marker)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("asked %s on #%d (%s, comment %d)", person, n, spec.Type, a.CommentID), nil
}

func quote(s string) string { return "> " + strings.ReplaceAll(s, "\n", "\n> ") }

// person is the human actor an ask goes to: the one named, or the manifest's only one.
func (m *Installed) person(name string) (string, error) {
	var people []string
	for _, a := range m.Actors {
		if a.Kind == "human" {
			people = append(people, a.Name)
		}
	}
	switch {
	case name != "" && slices.Contains(people, name):
		return name, nil
	case name != "":
		return "", &tools.Refused{Tool: tools.AskPerson, Reason: fmt.Sprintf("person %q is not a human actor of this installation", name)}
	case len(people) != 1:
		return "", &tools.Refused{Tool: tools.AskPerson, Reason: fmt.Sprintf("this installation has %d human actors %v: name the one to ask (person)", len(people), people)}
	}
	return people[0], nil
}
