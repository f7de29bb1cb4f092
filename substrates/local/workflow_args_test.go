//go:build unix

package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// A workflow playbook's arg forwarded from subject.text keeps its default when the launch gives
// no text (a param with no value), as an empty workflow_dispatch input does on gh-actions; a text
// given is the arg's value. (release-gate's `runner launch releaser` tagged "" and failed.)
func TestWorkflowArgWithNoValueKeepsItsDefault(t *testing.T) {
	f := fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  flow:
    behavior: flows/v.yml
    triggers: [{ dispatch: true, params: { V: subject.text } }]
`, files: map[string]string{
		"flows/v.yml": "name: v\nargs:\n  V: { default: dflt }\nsteps:\n  - id: write\n    command: cli sh -c 'printf %s \"$1\" > v.txt' sh $args.V\n",
	}}
	dir := installFleet(t, f, false)
	r := newRunner(t, dir, Options{Exe: builtAutonomy(t)})
	for _, c := range []struct{ text, want string }{{"", "dflt"}, {"v1.2", "v1.2"}} {
		s := launch(t, r, LaunchRequest{Actor: "flow", Text: c.text})
		got := waitEndedWithin(t, r, s.ID, 60)
		if got.Status != ir.Done {
			t.Fatalf("text %q: ended %s (%s)\n%s", c.text, got.Status, got.Reason, sessionLogOf(r, s.ID))
		}
		data, err := os.ReadFile(filepath.Join(dir, "v.txt"))
		if err != nil || string(data) != c.want {
			t.Errorf("launched with text %q: the arg was %q (%v), want %q", c.text, data, err, c.want)
		}
	}
}
