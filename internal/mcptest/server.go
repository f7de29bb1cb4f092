// Package mcptest is a stdio MCP server for tests, written with the official Go SDK: a test binary
// becomes it when started with Flag (its TestMain calls Serve), so tests run a real server process.
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Flag is the first argument that makes a test binary the server.
const Flag = "--mcp-test-server"

type greetIn struct {
	Name string `json:"name"`
}
type greetOut struct {
	Greeting string `json:"greeting"`
	Length   int    `json:"length"`
}

// Serve serves tools over stdio: greet (text and structured content), fail (a tool error), env (the
// server's environment), hang (writes its process group's pids to hang.pids, starts a
// grandchild, and never answers). "exit" as argument makes it exit before answering.
func Serve(args []string) int {
	if len(args) > 0 && args[0] == "exit" {
		fmt.Fprintln(os.Stderr, "test server: cannot open its database")
		return 3
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "greets"}, func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, greetOut, error) {
		g := "hello " + in.Name
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: g}}}, greetOut{Greeting: g, Length: len(g)}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "measure"}, func(_ context.Context, _ *mcp.CallToolRequest, in greetOut) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d chars: %s", in.Length, in.Greeting)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("the index is locked")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		wd, _ := os.Getwd()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cwd=" + wd + "\n" + strings.Join(os.Environ(), "\n")}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		child := osexec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			return nil, nil, err
		}
		_ = os.WriteFile("hang.pids", []byte(fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)), 0o644)
		select {} // never answers, ignores cancellation
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}
