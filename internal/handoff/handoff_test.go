package handoff

import (
	"strings"
	"testing"
)

// TestValidate: a spec is refused with a clear reason when its type, options or sizes are wrong.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		spec Spec
		want string
	}{
		{"no type", Spec{}, `type "" is not an ask's type`},
		{"decide with one option", Spec{Type: Decide, Decision: &Decision{Options: []string{"A"}}}, "needs two or more"},
		{"inform with options", Spec{Type: Inform, Decision: &Decision{Options: []string{"A", "B"}}}, "has no decision options"},
		{"duplicate option", Spec{Type: Decide, Decision: &Decision{Options: []string{"A", "A"}}}, "given twice"},
		{"option with a newline", Spec{Type: Decide, Decision: &Decision{Options: []string{"A", "B\nC"}}}, "control character"},
		{"too many options", Spec{Type: Decide, Decision: &Decision{Options: strings.Split(strings.Repeat("x,", 21)+"y", ",")}}, "at most 20"},
		{"in too large", Spec{Type: Consult, In: strings.Repeat("x", MaxIn+1)}, "in is 65537 bytes"},
		{"out with a control character", Spec{Type: Consult, Out: "a\x1bb"}, "out holds a control character"},
	} {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	ok := Spec{Type: Decide, In: "two designs\nfit", Decision: &Decision{Question: "which?", Options: []string{"A", "B"}}, Out: "the reason"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestCheck: a reply fits its ask's type, or is refused saying what it needs.
func TestCheck(t *testing.T) {
	t.Parallel()
	decide := Spec{Type: Decide, Decision: &Decision{Options: []string{"A", "B"}}}
	for _, c := range []struct {
		name  string
		spec  Spec
		reply Reply
		want  string
	}{
		{"decide without a choice", decide, Reply{}, "needs a choice, one of: A, B"},
		{"decide off the options", decide, Reply{Choice: "C"}, "needs a choice"},
		{"consult without an answer", Spec{Type: Consult}, Reply{}, "needs an answer"},
		{"consult with a choice", Spec{Type: Consult}, Reply{Choice: "A", Answer: "x"}, "offers no choice"},
		{"inform with an answer", Spec{Type: Inform}, Reply{Answer: "x"}, "takes no answer"},
		{"approve off approve/reject", Spec{Type: Approve}, Reply{Choice: "maybe"}, "approve, reject"},
	} {
		err := c.spec.Check(c.reply)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if err := decide.Check(Reply{Choice: "B", Answer: "cheaper"}); err != nil {
		t.Fatal(err)
	}
}

// TestDecode refuses a record that is not JSON, too large, or not a valid spec.
func TestDecode(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"{", strings.Repeat(" ", MaxEncoding+8*MaxText+1), `{"type":"shout"}`} {
		if _, err := Decode(raw); err == nil {
			t.Errorf("Decode(%.20q) accepted", raw)
		}
	}
	r := Record{Spec: Spec{Type: Inform, In: "deployed"}, ConfirmedBy: "the operator"}
	got, err := Decode(r.Encode())
	if err != nil || got.Type != Inform || got.ConfirmedBy != "the operator" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}
