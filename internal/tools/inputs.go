package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/ir"
)

// Bounds on what a model may ask for; larger input is refused, not cut.
const (
	MaxBody  = 65536 // a comment, an item body, a proposal or verdict body (GitHub's own limit)
	MaxTitle = 256
	MaxRef   = 200 // an item, a session id, an actor name
	MaxItems = 20  // labels, params
)

// Empty is the input of a tool that takes none.
type Empty struct{}

func (*Empty) validate() error { return nil }

// ItemRef names a work item.
type ItemRef struct {
	Item string `json:"item" jsonschema:"the work item: an issue or pull request number on GitHub, an item id locally"`
}

func (in *ItemRef) validate() error { return ref("item", in.Item) }

// StateQuery asks for the items in a lifecycle state.
type StateQuery struct {
	State string `json:"state" jsonschema:"a lifecycle state: open, ready, working, in-review, input-required, blocked, done or rejected"`
}

func (in *StateQuery) validate() error { return state(in.State) }

// Result is a session's result (the default result contract, autonomy.result.v1).
type Result struct {
	Status  string   `json:"status" jsonschema:"done when the work is complete and verified, failed when it is not"`
	Summary string   `json:"summary" jsonschema:"what happened, in a sentence or two"`
	Done    []string `json:"done,omitempty" jsonschema:"what was done, one line each"`
	// Output is the actor's own structured result, when it declares a result schema.
	Output json.RawMessage `json:"output,omitempty" jsonschema:"the structured result the actor's result schema asks for, if it has one"`
}

func (in *Result) validate() error {
	if in.Status != "done" && in.Status != "failed" {
		return fmt.Errorf("status is %q; use done or failed", in.Status)
	}
	return errors.Join(text("summary", in.Summary, MaxBody, true), lines("done", in.Done))
}

// Ask engages a person through the human seam, with a typed handoff (package handoff): the
// ask's kind routes it (approve, decide, consult or inform); in is what the asker hands over,
// question and options the decision, out what the person is to hand back.
type Ask struct {
	Kind     string   `json:"kind,omitempty" jsonschema:"approve (approve or reject), decide (one of options), consult (an answer in words) or inform (a notification that never waits and is not work); decision, or none, is the untyped ask of before: approve, or decide when options are given"`
	Question string   `json:"question" jsonschema:"what you ask or tell, in full"`
	Item     string   `json:"item,omitempty" jsonschema:"the work item the ask is about"`
	Options  []string `json:"options,omitempty" jsonschema:"for approve or decide: the choices (approve's default: approve, reject; decide needs two or more)"`
	In       string   `json:"in,omitempty" jsonschema:"what you hand over: the situation, background and your assessment"`
	Out      string   `json:"out,omitempty" jsonschema:"what the person is to hand back"`
	Person   string   `json:"person,omitempty" jsonschema:"the person (a human actor of the fleet) to ask; default: the fleet's only one"`
}

// Spec is the ask's typed handoff.
func (in *Ask) Spec() handoff.Spec {
	typ := in.Kind
	if typ == "" || typ == "decision" {
		typ = handoff.Approve
		if len(in.Options) > 0 {
			typ = handoff.Decide
		}
	}
	s := handoff.Spec{Type: typ, In: in.In, Out: in.Out}
	if in.Question != "" || len(in.Options) > 0 {
		s.Decision = &handoff.Decision{Question: in.Question, Options: in.Options}
	}
	return s
}

func (in *Ask) validate() error {
	if in.Kind != "" && in.Kind != "decision" && !slices.Contains(handoff.Types, in.Kind) {
		return fmt.Errorf("kind is %q; use approve, decide, consult or inform (decision, or none, for approve or decide by its options)", in.Kind)
	}
	spec := in.Spec()
	errs := []error{text("question", in.Question, MaxBody, true), optRef("item", in.Item), optRef("person", in.Person),
		text("in", in.In, handoff.MaxIn, false), text("out", in.Out, handoff.MaxText, false), spec.Validate()}
	return errors.Join(errs...)
}

// CommentInput is a comment on a work item.
type CommentInput struct {
	Item string `json:"item" jsonschema:"the work item to comment on"`
	Body string `json:"body" jsonschema:"the comment, in Markdown"`
}

func (in *CommentInput) validate() error {
	return errors.Join(ref("item", in.Item), text("body", in.Body, MaxBody, true))
}

// NewItem is a work item to create.
type NewItem struct {
	Title  string   `json:"title" jsonschema:"the item's title"`
	Body   string   `json:"body,omitempty" jsonschema:"the item's body, in Markdown"`
	Labels []string `json:"labels,omitempty" jsonschema:"labels to set"`
}

func (in *NewItem) validate() error {
	return errors.Join(text("title", in.Title, MaxTitle, true), text("body", in.Body, MaxBody, false), lines("labels", in.Labels))
}

// StateChange moves a work item to a lifecycle state.
type StateChange struct {
	Item  string `json:"item" jsonschema:"the work item"`
	State string `json:"state" jsonschema:"the lifecycle state to move it to"`
}

func (in *StateChange) validate() error { return errors.Join(ref("item", in.Item), state(in.State)) }

// LaunchInput launches an actor.
type LaunchInput struct {
	Actor   string            `json:"actor" jsonschema:"the actor to launch"`
	Subject string            `json:"subject,omitempty" jsonschema:"the work item it works on"`
	Params  map[string]string `json:"params,omitempty" jsonschema:"params for the actor, by their env names"`
}

func (in *LaunchInput) validate() error {
	errs := []error{ref("actor", in.Actor), optRef("subject", in.Subject)}
	if len(in.Params) > MaxItems {
		errs = append(errs, fmt.Errorf("params has %d entries; at most %d", len(in.Params), MaxItems))
	}
	for k, v := range in.Params {
		if !envName().MatchString(k) {
			errs = append(errs, fmt.Errorf("param name %q is not an env name (A-Z, 0-9, _)", k))
		}
		errs = append(errs, text("param "+k, v, MaxBody, false))
	}
	return errors.Join(errs...)
}

// SessionQuery lists sessions, optionally of one actor.
type SessionQuery struct {
	Actor string `json:"actor,omitempty" jsonschema:"only this actor's sessions"`
}

func (in *SessionQuery) validate() error { return optRef("actor", in.Actor) }

// SessionUpdate is a transition of another session.
type SessionUpdate struct {
	Session string `json:"session" jsonschema:"the session id"`
	Status  string `json:"status" jsonschema:"paused, running (resume or retry)"`
}

func (in *SessionUpdate) validate() error {
	if in.Status != string(ir.Paused) && in.Status != string(ir.Running) {
		return fmt.Errorf("status is %q; use paused or running", in.Status)
	}
	return ref("session", in.Session)
}

// SessionRef names a session.
type SessionRef struct {
	Session string `json:"session" jsonschema:"the session id"`
}

func (in *SessionRef) validate() error { return ref("session", in.Session) }

// Proposal proposes the workspace's commits.
type Proposal struct {
	Title string `json:"title" jsonschema:"the pull request's title"`
	Body  string `json:"body,omitempty" jsonschema:"the pull request's body, in Markdown"`
	Item  string `json:"item,omitempty" jsonschema:"the work item it resolves"`
}

func (in *Proposal) validate() error {
	return errors.Join(text("title", in.Title, MaxTitle, true), oneLine("title", in.Title), text("body", in.Body, MaxBody, false), optRef("item", in.Item))
}

// BreaksLine says whether r breaks a line of text, or hides or rewrites what a terminal shows
// of it: a control character (a line break, a tab, an escape…) or a Unicode line or paragraph
// separator.
func BreaksLine(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }

// oneLine refuses a character that BreaksLine in a field that is one line: a proposal's title
// heads the merge commit the trusted side writes, where a line break would let the model write
// lines of its own ("Approved-by: …").
func oneLine(field, v string) error {
	if strings.ContainsFunc(v, BreaksLine) {
		return fmt.Errorf("%s %q holds a line break or another control character: a %s is one line (put the rest in the body)", field, v, field)
	}
	return nil
}

// Verdict is a review verdict bound to the head it reviewed.
type Verdict struct {
	Change  string `json:"change" jsonschema:"the pull request (change) reviewed"`
	Head    string `json:"head" jsonschema:"the full 40-hex commit SHA of the head you reviewed"`
	Verdict string `json:"verdict" jsonschema:"approve or request_changes"`
	Body    string `json:"body,omitempty" jsonschema:"the review, in Markdown"`
}

var sha = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

func (in *Verdict) validate() error {
	errs := []error{ref("change", in.Change), text("body", in.Body, MaxBody, false)}
	if !sha().MatchString(in.Head) {
		errs = append(errs, fmt.Errorf("head %q is not a full 40-hex commit SHA", in.Head))
	}
	if in.Verdict != "approve" && in.Verdict != "request_changes" {
		errs = append(errs, fmt.Errorf("verdict is %q; use approve or request_changes", in.Verdict))
	}
	return errors.Join(errs...)
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`) })

func ref(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is required", field)
	}
	return optRef(field, v)
}

func optRef(field, v string) error {
	if len(v) > MaxRef {
		return fmt.Errorf("%s is %d bytes; at most %d", field, len(v), MaxRef)
	}
	if strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("%s %q holds a space or a control character", field, v)
	}
	return nil
}

// marker finds an autonomy marker: the HTML comment (<!-- autonomy:… -->) the trusted side
// writes to record asks, resolutions and escalations, which model text must never forge.
var marker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)<!--\s*autonomy:`) })

// Neutralize makes model text safe to post as the bot: no HTML comment can open in it (so
// nothing in it is hidden from the people reading it, and no autonomy marker can be forged).
func Neutralize(s string) string { return strings.ReplaceAll(s, "<!--", "&lt;!--") }

func text(field, v string, limit int, required bool) error {
	switch {
	case marker().MatchString(v):
		return fmt.Errorf("%s holds an autonomy marker (<!-- autonomy:…), which only autonomy's trusted jobs write", field)
	case required && strings.TrimSpace(v) == "":
		return fmt.Errorf("%s is required", field)
	case len(v) > limit:
		return fmt.Errorf("%s is %d bytes; at most %d", field, len(v), limit)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("%s holds a NUL byte", field)
	}
	return nil
}

func lines(field string, vs []string) error {
	if len(vs) > MaxItems {
		return fmt.Errorf("%s has %d entries; at most %d", field, len(vs), MaxItems)
	}
	for _, v := range vs {
		if err := text(field+" entry", v, MaxTitle, true); err != nil {
			return err
		}
	}
	return nil
}

func state(s string) error {
	if !slices.Contains(ir.StateNames(), s) {
		return fmt.Errorf("state %q is not a lifecycle state; use one of %s", s, strings.Join(ir.StateNames(), ", "))
	}
	return nil
}

func schemaOf(in Input) (json.RawMessage, error) {
	s, err := jsonschema.ForType(reflect.TypeOf(in).Elem(), &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// ReportedStatus is the status and summary a result document (a submit_result input, a result
// file) reports, read by their exact keys as its schema reads them: decoding into Result would
// also take "Status" or "STATUS" (encoding/json matches keys case-insensitively, the last one
// winning), so {"status":"failed","Status":"done"} would validate as failed yet read as done.
func ReportedStatus(data []byte) (status, summary string, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return "", "", err
	}
	// A member that is absent or not a string is "" (the schema has said what it must be).
	_ = json.Unmarshal(m["status"], &status)
	_ = json.Unmarshal(m["summary"], &summary)
	return status, summary, nil
}
