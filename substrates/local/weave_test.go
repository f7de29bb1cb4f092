package local

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// An overlay targets skill/NAME by the behavior's declared name: a SKILL.md in the folder
// reviewer whose frontmatter says name: code-review gets the overlay for skill/code-review and not
// the one for skill/reviewer, and the session's woven event says which name matched.
func TestOverlayMatchesTheDeclaredSkillName(t *testing.T) {
	t.Parallel()
	received := filepath.Join(t.TempDir(), "received.md")
	overlay := func(slug, ref, body string) string {
		return "---\nschema: playbooks/v1\nslug: " + slug + "\ntitle: " + slug + "\ntargets: [{kind: skill, ref: " + ref + "}]\nkind: overlay\nstatus: active\n---\n" + body + "\n"
	}
	dir := installFleet(t, fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  judge:
    behavior: skills/reviewer
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat > ` + received + `; ` + deliverResult + `']
`,
		files: map[string]string{
			"skills/reviewer/SKILL.md": "---\nname: code-review\ndescription: judges code\n---\n# Review\n",
			"playbooks/by-name.md":     overlay("by-name", "skill/code-review", "Woven by its declared name."),
			"playbooks/by-folder.md":   overlay("by-folder", "skill/reviewer", "Woven by its folder."),
			"playbooks/_index.md":      "",
		},
	}, false)
	r := newRunner(t, dir, Options{})
	s := launch(t, r, LaunchRequest{Actor: "judge"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("the session ended %s: %s", got.Status, got.Reason)
	}
	r.Wait()
	text := readFile(t, received)
	if !strings.Contains(text, "Woven by its declared name.") || strings.Contains(text, "Woven by its folder.") {
		t.Errorf("the agent received:\n%s", text)
	}
	events, err := r.Store.Events(context.Background(), s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var woven []store.Event
	for _, e := range events {
		if e.Kind == "woven" {
			woven = append(woven, e)
		}
	}
	want := "1 overlay woven: by-name (overlay, priority 50); matched as skill/code-review (the name its frontmatter declares; its folder is reviewer)"
	if len(woven) != 1 || woven[0].Message != want {
		t.Errorf("woven events %+v, want one %q", woven, want)
	}
}
