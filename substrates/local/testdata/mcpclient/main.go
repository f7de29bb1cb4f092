// Command mcpclient is a test's own agent command: a tiny MCP client that starts the server
// $AUTONOMY_MCP_CONFIG names (its mcpServers.autonomy: command, args, env) and calls the tools
// its arguments name, each TOOL=JSON, printing one line a call: "TOOL ok: TEXT" or
// "TOOL refused: TEXT".
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient:", err)
		os.Exit(1)
	}
}

func run() error {
	data, err := os.ReadFile(os.Getenv("AUTONOMY_MCP_CONFIG"))
	if err != nil {
		return err
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return err
	}
	s, ok := cfg.MCPServers["autonomy"]
	if !ok || s.Type != "stdio" {
		return fmt.Errorf("no stdio server autonomy in %s", data)
	}
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpclient", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	for _, a := range os.Args[1:] {
		tool, args, _ := strings.Cut(a, "=")
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			fmt.Printf("%s refused: %v\n", tool, err)
			continue
		}
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		verdict := "ok"
		if res.IsError {
			verdict = "refused"
		}
		fmt.Printf("%s %s: %s\n", tool, verdict, strings.Join(text, " "))
	}
	return nil
}
