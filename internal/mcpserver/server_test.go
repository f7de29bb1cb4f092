package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/tools"
)

type recordingBackend struct {
	items
	applied []tools.Effect
}

func (b *recordingBackend) Apply(_ context.Context, e tools.Effect, _ tools.Input) (any, error) {
	b.applied = append(b.applied, e)
	return map[string]any{"ok": true}, nil
}

func (b *recordingBackend) Read(ctx context.Context, tool string, in tools.Input) (any, error) {
	if tool == tools.ListSessions {
		return []map[string]any{{"id": "s-9", "actor": in.(*tools.SessionQuery).Actor}}, nil
	}
	return b.items.Read(ctx, tool, in)
}

func connect(t *testing.T, s mcpserver.Session, b mcpserver.Backend) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := mcpserver.New(s, b).Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.(*mcp.TextContent).Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

func TestServerListsAndChecks(t *testing.T) {
	b := &recordingBackend{}
	cs := connect(t, mcpserver.Session{ID: "s-1", Actor: "pm",
		Grants: []tools.Grant{{Name: "tasks:converse"}, {Name: "agent:list", Scope: "develop"}}, Max: map[string]int{"comment": 1}}, b)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range list.Tools {
		got = append(got, tl.Name)
	}
	want := []string{"ask_person", "comment", "list_items", "list_sessions", "read_item", "session_info", "submit_result"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	if out, isErr := call(t, cs, "read_item", `{"item":"7"}`); isErr || !strings.Contains(out, "Add a --json flag") {
		t.Errorf("read_item: %s", out)
	}
	if out, isErr := call(t, cs, "comment", `{"item":"7","body":"hi"}`); isErr {
		t.Errorf("comment: %s", out)
	}
	if out, isErr := call(t, cs, "comment", `{"item":"7","body":"again"}`); !isErr || !strings.Contains(out, "already used its 1 comment") {
		t.Errorf("a comment over the cap: %s", out)
	}
	if out, isErr := call(t, cs, "list_sessions", `{}`); !isErr || !strings.Contains(out, "agent:list is scoped") {
		t.Errorf("an unscoped list by a scoped actor: %s", out)
	}
	if out, isErr := call(t, cs, "list_sessions", `{"actor":"reviewer"}`); !isErr || !strings.Contains(out, `may not list "reviewer"`) {
		t.Errorf("a list outside the scope: %s", out)
	}
	if out, isErr := call(t, cs, "list_sessions", `{"actor":"develop"}`); isErr || !strings.Contains(out, "s-9") {
		t.Errorf("a list within the scope: %s", out)
	}
	if len(b.applied) != 1 || b.applied[0].Actor != "pm" || b.applied[0].Session != "s-1" {
		t.Errorf("applied %+v, want the one comment of pm's session s-1", b.applied)
	}
}
