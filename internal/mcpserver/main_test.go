package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// serveFlag makes the test binary an MCP server: serveFlag OUTPUTS ACTOR GRANTS-JSON.
const serveFlag = "--serve-autonomy-mcp"

func TestMain(m *testing.M) {
	if len(os.Args) == 5 && os.Args[1] == serveFlag {
		os.Exit(serve(os.Args[2], os.Args[3], os.Args[4]))
	}
	os.Exit(m.Run())
}

func serve(outputs, actor, grantsJSON string) int {
	var grants []tools.Grant
	if err := json.Unmarshal([]byte(grantsJSON), &grants); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out, err := tools.CreateOutputs(outputs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer out.Close()
	s := mcpserver.Session{ID: "s-1", Actor: actor, Grants: grants}
	if err := mcpserver.Serve(context.Background(), s, mcpserver.Recorder{Reader: items{}, Outputs: out}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// items is a reader with one work item and no sessions.
type items struct{}

func (items) Read(_ context.Context, tool string, in tools.Input) (any, error) {
	if r, ok := in.(*tools.ItemRef); ok && r.Item == "7" {
		return map[string]any{"item": "7", "title": "Add a --json flag", "state": "open"}, nil
	}
	return nil, fmt.Errorf("%s: nothing here", tool)
}

func (items) SessionActor(context.Context, string) (string, error) {
	return "", errors.New("no such session")
}
