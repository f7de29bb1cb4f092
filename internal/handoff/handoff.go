// Package handoff is the typed payload of the human seam (the standard's Handoffs section): an
// ask to a person carries its type (approve, decide, consult or inform: the decision routing),
// what the asker hands over (in), the choice requested with its options (decision) and what the
// receiver is to hand back (out). A Record adds what came back: the choice or answer, who made
// it (the verified redeemer, never a claimed name) and the receiver's confirmation.
package handoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The types of an ask: the standard's RACI/DACI decision types a person is routed.
const (
	// Approve asks for approve or reject.
	Approve = "approve"
	// Decide asks for one of the decision's options.
	Decide = "decide"
	// Consult asks for an answer in words (out).
	Consult = "consult"
	// Inform tells: it never parks the asker and is not work; the receiver confirms receipt.
	Inform = "inform"
)

// Types are the types of an ask, in the order the docs list them.
var Types = []string{Approve, Decide, Consult, Inform}

// Bounds on a handoff; larger input is refused, not cut.
const (
	MaxIn       = 65536 // what the asker hands over, the question
	MaxText     = 4096  // what to hand back, an answer
	MaxOption   = 256
	MaxOptions  = 20
	MaxEncoding = 4 * MaxIn
)

// Decision is the choice requested.
type Decision struct {
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`
}

// Spec is the typed payload of an ask.
type Spec struct {
	Type     string    `json:"type"`
	In       string    `json:"in,omitempty"`
	Decision *Decision `json:"decision,omitempty"`
	Out      string    `json:"out,omitempty"`
}

// Options are the choices a resolution picks from: the decision's, approve and reject for an
// approval without its own, none for consult and inform.
func (s *Spec) Options() []string {
	if s.Decision != nil && len(s.Decision.Options) > 0 {
		return s.Decision.Options
	}
	if s.Type == Approve {
		return []string{"approve", "reject"}
	}
	return nil
}

// Validate checks a spec: a known type, bounded text with no control characters but newlines
// and tabs, and options only where a choice is asked (decide needs two or more).
func (s *Spec) Validate() error {
	if !slices.Contains(Types, s.Type) {
		return fmt.Errorf("type %q is not an ask's type; use %s", s.Type, strings.Join(Types, ", "))
	}
	errs := []error{text("in", s.In, MaxIn, false), text("out", s.Out, MaxText, false)}
	var opts []string
	if d := s.Decision; d != nil {
		errs = append(errs, text("decision.question", d.Question, MaxIn, false))
		opts = d.Options
	}
	switch {
	case len(opts) > 0 && (s.Type == Consult || s.Type == Inform):
		errs = append(errs, fmt.Errorf("a %s ask has no decision options (they are for approve and decide)", s.Type))
	case s.Type == Decide && len(opts) < 2:
		errs = append(errs, fmt.Errorf("a decide ask needs two or more decision options, not %d", len(opts)))
	case len(opts) > MaxOptions:
		errs = append(errs, fmt.Errorf("decision.options has %d entries; at most %d", len(opts), MaxOptions))
	}
	seen := map[string]bool{}
	for _, o := range opts {
		if err := option(o); err != nil {
			errs = append(errs, err)
		} else if seen[o] {
			errs = append(errs, fmt.Errorf("decision option %q is given twice", o))
		}
		seen[o] = true
	}
	return errors.Join(errs...)
}

// option is a choice: one short line a command can quote (no spaces at either end).
func option(o string) error {
	switch {
	case o == "" || strings.TrimSpace(o) != o:
		return fmt.Errorf("decision option %q must be non-empty, with no space at either end", o)
	case len(o) > MaxOption:
		return fmt.Errorf("decision option %.20q… is %d bytes; at most %d", o, len(o), MaxOption)
	case strings.IndexFunc(o, unicode.IsControl) >= 0:
		return fmt.Errorf("decision option %q holds a control character", o)
	}
	return nil
}

func text(field, v string, limit int, required bool) error {
	switch {
	case required && strings.TrimSpace(v) == "":
		return fmt.Errorf("%s is required", field)
	case len(v) > limit:
		return fmt.Errorf("%s is %d bytes; at most %d", field, len(v), limit)
	case !utf8.ValidString(v):
		return fmt.Errorf("%s is not UTF-8", field)
	case strings.IndexFunc(v, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0:
		return fmt.Errorf("%s holds a control character (only newlines and tabs are kept)", field)
	}
	return nil
}

// Reply is what a receiver hands back.
type Reply struct {
	// Choice is one of the spec's options (approve and decide).
	Choice string `json:"choice,omitempty"`
	// Answer is the out the receiver hands back (required for consult).
	Answer string `json:"answer,omitempty"`
}

// Check says whether a reply fits the spec: a choice from its options where it asks one (and
// none elsewhere), an answer for a consult, and nothing but a confirmation for an inform.
func (s *Spec) Check(r Reply) error {
	opts := s.Options()
	switch {
	case len(opts) > 0 && !slices.Contains(opts, r.Choice):
		return fmt.Errorf("this %s ask needs a choice, one of: %s (got %q)", s.Type, strings.Join(opts, ", "), r.Choice)
	case len(opts) == 0 && r.Choice != "":
		return fmt.Errorf("this %s ask offers no choice; drop %q", s.Type, r.Choice)
	case s.Type == Consult && strings.TrimSpace(r.Answer) == "":
		return errors.New("this consult ask needs an answer: what the receiver hands back")
	case s.Type == Inform && r.Answer != "":
		return errors.New("an inform ask takes no answer: its receiver only confirms receipt")
	}
	return text("answer", r.Answer, MaxText, false)
}

// Record is an ask's handoff as kept: the spec, what came back and who made it, and the
// receiver's confirmation of receipt.
type Record struct {
	Spec
	Reply
	// By is who resolved it, as the runner verified them (the redeemer); At when.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at,omitzero"`
	// ConfirmedBy and ConfirmedAt record that the receiver received the ask (I-PASS's synthesis
	// by the receiver): set by the first redeem of its token, a confirmation or a resolution.
	ConfirmedBy string    `json:"confirmedBy,omitempty"`
	ConfirmedAt time.Time `json:"confirmedAt,omitzero"`
}

// Encode is the record as JSON.
func (r *Record) Encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Decode reads a record Encode wrote, refusing one too large or not valid.
func Decode(raw string) (*Record, error) {
	if len(raw) > MaxEncoding+8*MaxText {
		return nil, fmt.Errorf("a handoff record of %d bytes is too large", len(raw))
	}
	var r Record
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("a handoff record is not JSON: %v", err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("a handoff record is not valid: %v", err)
	}
	return &r, nil
}
