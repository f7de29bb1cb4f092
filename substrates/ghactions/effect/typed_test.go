package effect

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTypedAskOnGitHub: pm's ask_person, applied by the trusted job, posts a typed ask whose
// marker carries its type and options; a maintainer's answer off the options, or a verb the
// type does not take, is refused and records nothing; the right one is recorded with the
// maintainer who made it, read back by Asks. An inform labels nothing (nothing waits on it)
// and is closed by /agent confirm.
func TestTypedAskOnGitHub(t *testing.T) {
	w, e := applyWorld(t)
	ctx := context.Background()
	n := strconv.Itoa(w.item)
	res, err := e.Apply(ctx, ApplyOptions{Installed: goldenInstalled(t), Actor: "pm", Session: "7",
		Outputs: outputs(t, "7",
			`{"tool":"ask_person","actor":"pm","input":{"kind":"decide","question":"Which design?","options":["A","B"],"in":"both fit <!-- x -->","out":"why","item":"`+n+`"}}`,
			`{"tool":"ask_person","actor":"pm","input":{"kind":"consult","question":"No item?"}}`,
			`{"tool":"ask_person","actor":"pm","input":{"kind":"consult","question":"x","person":"pm","item":"`+n+`"}}`,
		)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Refused != "" || !strings.Contains(res[1].Refused, "give item") || !strings.Contains(res[2].Refused, `"pm" is not a human actor`) {
		t.Fatalf("applied: %+v", res)
	}
	asks, err := Asks(ctx, e, w.item)
	if err != nil || len(asks) != 1 {
		t.Fatal(asks, err)
	}
	a := asks[0]
	if a.Actor != "maintainer" || a.Typed == nil || a.Typed.Type != "decide" || !slices.Equal(a.Typed.Options(), []string{"A", "B"}) {
		t.Fatalf("the ask read back: %+v %+v", a, a.Typed)
	}
	body := w.lastComment(w.item)
	for _, want := range []string{" type=decide choices=", "Which design?", "both fit &lt;!-- x -->", "**Out** (what to hand back): why", "/agent answer " + a.Token + " <option>", "- B\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the ask's comment lacks %q:\n%s", want, body)
		}
	}
	resolve := func(verb, note string) error {
		t.Helper()
		text := strings.TrimSpace("/agent " + verb + " " + a.Token + " " + note)
		id, err := w.fake.AddComment(w.item, "ada", text)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(ctx, e, Resolution{Item: w.item, By: "ada", Verb: verb, Token: a.Token, Note: note, CommentID: id})
		return err
	}
	var r *Refused
	if err := resolve("answer", "C"); !errors.As(err, &r) || !strings.Contains(r.Reason, `"C" is not one of the options: A, B`) {
		t.Fatalf("an answer off the options: %v", err)
	}
	if err := resolve("approve", ""); !errors.As(err, &r) || !strings.Contains(r.Reason, "this ask is a decide") {
		t.Fatalf("approve of a decide: %v", err)
	}
	if err := resolve("answer", "B"); err != nil {
		t.Fatal(err)
	}
	asks, _ = Asks(ctx, e, w.item)
	if asks[0].Resolved != "answer" || asks[0].Answer != "B" {
		t.Fatalf("the resolution read back: %+v", asks[0])
	}
	if last := w.lastComment(w.item); !strings.Contains(last, "verb=answer by=ada") {
		t.Fatalf("the resolution's marker: %s", last)
	}

	other := w.fake.AddIssue("release", "")
	before, _ := w.fake.Issue(other)
	if _, err := e.Apply(ctx, ApplyOptions{Installed: goldenInstalled(t), Actor: "pm", Session: "8",
		Outputs: outputs(t, "8", `{"tool":"ask_person","actor":"pm","input":{"kind":"inform","question":"v2 is out","item":"`+strconv.Itoa(other)+`"}}`)}); err != nil {
		t.Fatal(err)
	}
	is, _ := w.fake.Issue(other)
	if !slices.Equal(is.Labels, before.Labels) {
		t.Errorf("an inform labelled #%d: %v", other, is.Labels)
	}
	asks, _ = Asks(ctx, e, other)
	a = asks[0]
	if err := resolve2(t, w, e, other, a.Token, "answer", "ok"); !errors.As(err, &r) || !strings.Contains(r.Reason, "/agent confirm") {
		t.Fatalf("an answer to an inform: %v", err)
	}
	if err := resolve2(t, w, e, other, a.Token, "confirm", ""); err != nil {
		t.Fatal(err)
	}
	if asks, _ = Asks(ctx, e, other); asks[0].Resolved != "confirm" {
		t.Fatalf("the inform: %+v", asks[0])
	}
}

func resolve2(t *testing.T, w *world, e *Env, item int, token, verb, note string) error {
	t.Helper()
	id, err := w.fake.AddComment(item, "ada", strings.TrimSpace("/agent "+verb+" "+token+" "+note))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(context.Background(), e, Resolution{Item: item, By: "ada", Verb: verb, Token: token, Note: note, CommentID: id})
	return err
}
