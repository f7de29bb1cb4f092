package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autonomyhq/autonomy/internal/mcpserver"
	"github.com/autonomyhq/autonomy/internal/tools"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestServeAnswersBeforeTheEnd: a client that writes its requests and closes its end at once (a
// shell's printf … | autonomy gh mcp) gets an answer to each, and its effect is applied; the
// SDK alone cancels what is in flight at the end of the input.
func TestServeAnswersBeforeTheEnd(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"comment","arguments":{"item":"7","body":"hi"}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	b := &recordingBackend{}
	s := mcpserver.Session{ID: "s-1", Actor: "pm", Grants: []tools.Grant{{Name: "tasks:converse"}}}
	tr := &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriteCloser{&out}}
	if err := mcpserver.ServeOn(context.Background(), s, b, tr); err != nil {
		t.Fatal(err)
	}
	answered := map[float64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg struct {
			ID     float64
			Result json.RawMessage
		}
		if json.Unmarshal([]byte(l), &msg) == nil && msg.Result != nil {
			answered[msg.ID] = true
		}
	}
	if !answered[1] || !answered[2] || !answered[3] || len(b.applied) != 1 {
		t.Errorf("answered %v, applied %v; the output:\n%s", answered, b.applied, out.String())
	}
}
