//go:build unix

package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/handoff"
	"github.com/autonomyhq/autonomy/ir"
)

var askFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  worker:
    behavior: scripts/wait.sh
    triggers: [{ dispatch: true }]
  maintainer:
    kind: human
    behavior: humans/maintainer.md
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`, files: map[string]string{"scripts/wait.sh": handsUnitFleet.files["scripts/wait.sh"], "humans/maintainer.md": "# Decide\n"}}

// TestAskPersonEngagesTypedAsk: a session's ask_person is a typed ask of the fleet's person,
// launched for the session (which holds no agent:launch) and not parking it; the model reads
// no token, which the runner keeps for the owner only; the person resolves the ask with it,
// and what came back is recorded; an invalid ask is refused and records nothing.
func TestAskPersonEngagesTypedAsk(t *testing.T) {
	dir := installFleet(t, askFleet, true)
	r := newRunner(t, dir, Options{})
	w := launch(t, r, LaunchRequest{Actor: "worker"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, w.ID)
	}()
	cs := sessionTools(t, dir, w.ID)
	if out, isErr := callTool(t, cs, "ask_person", `{"kind":"decide","question":"which?","options":["A"]}`); !isErr || !strings.Contains(out, "two or more") {
		t.Fatalf("a decide with one option: %s", out)
	}
	if out, isErr := callTool(t, cs, "ask_person", `{"kind":"consult","question":"x","person":"worker"}`); !isErr || !strings.Contains(out, "not a human actor") {
		t.Fatalf("asking an agent: %s", out)
	}
	out, isErr := callTool(t, cs, "ask_person", `{"kind":"decide","question":"which design?","options":["A","B"],"in":"both fit","out":"why","item":"12"}`)
	if isErr || strings.Contains(out, "atk_") {
		t.Fatalf("ask_person: %s", out)
	}
	var placed AskPlaced
	if err := json.Unmarshal([]byte(out), &placed); err != nil || placed.Person != "maintainer" || placed.Type != "decide" {
		t.Fatalf("ask_person: %s (%v)", out, err)
	}
	ask, _, _ := r.Store.Get(context.Background(), placed.Ask)
	if ask.Kind != "human" || ask.Status != ir.Running || ask.Origin != "session:"+w.ID || ask.Params["ITEM"] != "12" {
		t.Fatalf("the ask: %+v", ask)
	}
	if s, _, _ := r.Store.Get(context.Background(), w.ID); s.Status != ir.Running {
		t.Fatalf("the asking session is %s, not running", s.Status)
	}
	fi, err := os.Stat(r.In.TokenFile(ask.ID))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	att, _ := os.ReadFile(filepath.Join(dir, ".autonomy/state/attention.md"))
	for _, want := range []string{"- type: decide", "- option: `B`", "- in: `both fit`", "- token: in .autonomy/state/asks/" + ask.ID + ".token"} {
		if !strings.Contains(string(att), want) {
			t.Errorf("attention.md lacks %q:\n%s", want, att)
		}
	}
	raw, _ := os.ReadFile(r.In.TokenFile(ask.ID))
	if _, err := r.Update(context.Background(), ask.ID, ir.Patch{Status: ir.Done, Token: strings.TrimSpace(string(raw)), Evidence: "A is smaller", Choice: "A", Answer: "smaller"}); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Handoff(context.Background(), ask.ID)
	if err != nil || rec.Type != handoff.Decide || rec.Choice != "A" || rec.In != "both fit" || rec.Decision.Question != "which design?" {
		t.Fatalf("the handoff: %+v %v", rec, err)
	}
	if _, err := os.Stat(r.In.TokenFile(ask.ID)); !os.IsNotExist(err) {
		t.Errorf("the spent token is still kept: %v", err)
	}
}

// TestLaunchToolKeepsAPersonsToken: an ask a session makes with the launch tool (hello-human's
// requester launching the approver) keeps its redeem token for the person, as ask_person does:
// the model reads the ask's id only, the token is in the ask's token file (owner only) and
// resolves it. The token used to be dropped, leaving an ask no one could resolve.
func TestLaunchToolKeepsAPersonsToken(t *testing.T) {
	f := askFleet
	f.yml = strings.Replace(f.yml, "    behavior: scripts/wait.sh\n", "    behavior: scripts/wait.sh\n    capabilities: [agent:launch@maintainer]\n", 1)
	dir := installFleet(t, f, true)
	r := newRunner(t, dir, Options{})
	w := launch(t, r, LaunchRequest{Actor: "worker"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, w.ID)
	}()
	out, isErr := callTool(t, sessionTools(t, dir, w.ID), "launch", `{"actor":"maintainer","subject":"12"}`)
	if isErr || strings.Contains(out, "atk_") {
		t.Fatalf("launch: %s", out)
	}
	var placed ToolSession
	if err := json.Unmarshal([]byte(out), &placed); err != nil || placed.ID == "" {
		t.Fatalf("launch: %s (%v)", out, err)
	}
	fi, err := os.Stat(r.In.TokenFile(placed.ID))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the ask's token is not kept for the person: %v %v", fi, err)
	}
	raw, _ := os.ReadFile(r.In.TokenFile(placed.ID))
	if _, err := r.Update(context.Background(), placed.ID, ir.Patch{Status: ir.Done, Token: strings.TrimSpace(string(raw)), Evidence: "read it"}); err != nil {
		t.Fatal(err)
	}
}
