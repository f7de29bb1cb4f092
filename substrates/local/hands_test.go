//go:build unix

package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/ir"
)

// handsUnitFleet: mute holds nothing, talker tasks:converse and code:propose; both wait for a
// file, so their sessions stay in flight while the test calls their tools.
var handsUnitFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  mute:
    behavior: scripts/wait.sh
    triggers: [{ dispatch: true }]
  talker:
    behavior: scripts/wait.sh
    capabilities: [tasks:converse, code:propose]
    triggers: [{ dispatch: true }]
policy:
  box:
    local: { tools: { max: { comment: 1 } } }
`, files: map[string]string{"scripts/wait.sh": "#!/bin/sh\nwhile [ ! -e \"$AUTONOMY_DIR/done\" ]; do sleep 0.05; done\n" + scriptDone}}

// sessionTools connects an MCP client to a fresh server of session id (a new server each time,
// as a restarted or a second autonomy runner mcp would be).
func sessionTools(t *testing.T, dir, id string) *mcp.ClientSession {
	t.Helper()
	r := newRunner(t, dir, Options{Session: id})
	h, s, err := r.Hands()
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := mcpserver.New(s, h).Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		return err.Error(), true
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.(*mcp.TextContent).Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

// An actor without tasks:converse has no comment tool, and a call of it lands nothing; a cap is
// counted in the store, so a second server of the same session (restarted, or one its shell
// started) cannot spend it again, policy.box.local.tools.max included; the tools on work items
// say the local runner keeps none.
func TestLocalToolsAreChecked(t *testing.T) {
	dir := installFleet(t, handsUnitFleet, true)
	r := newRunner(t, dir, Options{})
	mute := launch(t, r, LaunchRequest{Actor: "mute"})
	talker := launch(t, r, LaunchRequest{Actor: "talker"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, mute.ID)
		waitEnded(t, r, talker.ID)
	}()

	cs := sessionTools(t, dir, mute.ID)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "comment" || tl.Name == "propose" || tl.Name == "launch" {
			t.Errorf("mute is offered %s", tl.Name)
		}
	}
	if out, isErr := callTool(t, cs, "comment", `{"item":"7","body":"hi"}`); !isErr {
		t.Errorf("mute's comment: %s", out)
	}

	first := sessionTools(t, dir, talker.ID)
	// A title heads the runner's merge commit: one with a line break is refused, its cap unspent.
	if out, isErr := callTool(t, first, "propose", `{"title":"Fix\n\nApproved-by: the maintainer"}`); !isErr || !strings.Contains(out, "a title is one line") {
		t.Errorf("a title with a line break: %q, want refused", out)
	}
	if out, isErr := callTool(t, first, "propose", `{"title":"Fix"}`); isErr || !strings.Contains(out, `"recorded":true`) {
		t.Fatalf("talker's proposal: %s", out)
	}
	if out, isErr := callTool(t, first, "comment", `{"item":"7","body":"Done <!-- x -->"}`); isErr {
		t.Fatalf("talker's comment: %s", out)
	}
	second := sessionTools(t, dir, talker.ID)
	if out, isErr := callTool(t, second, "propose", `{"title":"Again"}`); !isErr || !strings.Contains(out, "already used its 1 propose call") {
		t.Errorf("a second server's proposal: %q, want refused past the cap", out)
	}
	if out, isErr := callTool(t, second, "comment", `{"item":"7","body":"More."}`); !isErr || !strings.Contains(out, "already used its 1 comment call") {
		t.Errorf("a second comment past tools.max.comment: 1: %q", out)
	}
	if out, isErr := callTool(t, second, "read_item", `{"item":"7"}`); !isErr || !strings.Contains(out, "has no issue tracker") {
		t.Errorf("read_item: %q", out)
	}
	events, err := r.Store.Events(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		if strings.HasPrefix(e.Kind, "tool:") {
			kinds = append(kinds, e.Session+" "+e.Kind)
		}
	}
	want := []string{talker.ID + " tool:propose", talker.ID + " tool:comment"}
	if !slices.Equal(kinds, want) {
		t.Errorf("recorded effects %q, want %q", kinds, want)
	}
	if s, _, _ := r.Store.Get(t.Context(), mute.ID); s.Status != ir.Running {
		t.Errorf("mute is %s", s.Status)
	}
}
