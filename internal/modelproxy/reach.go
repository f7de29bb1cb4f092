package modelproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// What a request may have the provider do. A provider runs some tools itself (OpenAI's live web
// search, remote MCP servers, file search, code interpreter, image generation; Anthropic's web
// search, web fetch, code execution, MCP connector) and fetches what a request names by URL (an
// image, a file, a document). Each reaches the network, or the organization's stored data, for
// the session and past its sandbox, whose only way out is this proxy: a process in the sandbox
// holding the placeholder key could have the provider fetch a URL that carries what it read. So
// a request asking for any of them is refused (400, in the API's own error shape), naming where
// in the body; the tools the CLI runs itself, in the sandbox, and content sent inline pass.
// OpenAI's web search passes only kept to OpenAI's cache (external_web_access: false, what the
// pinned codex sends). The body is read whole as JSON: one that is not, or that holds an object
// with a repeated key (which the provider's parser could read otherwise than this check did), is
// refused too.

// openAIClientTools are the Responses API's tool types the client runs (the model only asks).
var openAIClientTools = map[string]bool{"function": true, "custom": true, "local_shell": true, "shell": true, "apply_patch": true}

// A tool_search tool is the client's when its execution is "client" (codex searches its deferred
// tools itself); the provider's otherwise.

// anthropicClientTools are the prefixes of the Messages API's versioned tool types the client
// runs (bash_20250124, text_editor_20250728, …); a tool with no type, or "custom", is the
// client's own.
var anthropicClientTools = []string{"bash_", "text_editor_", "computer_", "memory_"}

// reachRefusal is why the request body text to path must not be forwarded, "" when it may ("" for
// path "": a request with no body).
func reachRefusal(path string, text []byte) string {
	if path == "" {
		return ""
	}
	if err := strictJSON(text); err != nil {
		return "the request body is not JSON the proxy can check: " + err.Error()
	}
	var body any
	if err := json.Unmarshal(text, &body); err != nil {
		return "the request body is not JSON the proxy can check: " + err.Error()
	}
	top, ok := body.(map[string]any)
	if !ok {
		return "the request body is not a JSON object"
	}
	var why string
	switch path {
	case "/openai/v1/responses":
		why = openAIResponses(top)
	case "/openai/v1/chat/completions":
		why = openAIChat(top)
	case "/anthropic/v1/messages", "/anthropic/v1/messages/count_tokens":
		why = anthropicMessages(top)
	}
	if why == "" {
		why = fetched(body, "")
	}
	if why == "" {
		return ""
	}
	return why + ": the provider would reach the network or the organization's data for the session, past its sandbox; only the CLI's own tools and content sent inline pass"
}

// openAIResponses checks a Responses API request's tools, tool choice and stored prompt.
func openAIResponses(m map[string]any) string {
	if _, ok := m["prompt"]; ok {
		return "prompt (a stored prompt, which can carry the provider's own tools)"
	}
	if why := openAITools(m["tools"], "tools"); why != "" {
		return why
	}
	if c, ok := m["tool_choice"].(map[string]any); ok {
		if t, _ := c["type"].(string); t != "function" && t != "custom" && t != "allowed_tools" {
			return fmt.Sprintf("tool_choice of type %q (the provider's own tool)", t)
		}
	}
	return ""
}

// openAITools checks a Responses API tools list (at path), a namespace's tools included.
func openAITools(v any, path string) string {
	list, _ := v.([]any)
	for i, x := range list {
		at := path + "[" + strconv.Itoa(i) + "]"
		t, _ := x.(map[string]any)
		typ, _ := t["type"].(string)
		switch {
		case openAIClientTools[typ]:
		case typ == "tool_search" && t["execution"] == "client":
		case typ == "namespace":
			if why := openAITools(t["tools"], at+".tools"); why != "" {
				return why
			}
		case typ == "web_search":
			if live, ok := t["external_web_access"].(bool); !ok || live {
				return at + ": web_search with live access (external_web_access: false keeps it to OpenAI's cache; codex's web_search = \"cached\")"
			}
		default:
			return fmt.Sprintf("%s: the provider's own tool %q", at, typ)
		}
	}
	return ""
}

// openAIChat checks a Chat Completions request: function and custom tools only, no web search.
func openAIChat(m map[string]any) string {
	if _, ok := m["web_search_options"]; ok {
		return "web_search_options (the provider's web search)"
	}
	list, _ := m["tools"].([]any)
	for i, x := range list {
		t, _ := x.(map[string]any)
		if typ, _ := t["type"].(string); typ != "function" && typ != "custom" {
			return fmt.Sprintf("tools[%d]: the provider's own tool %q", i, typ)
		}
	}
	return ""
}

// anthropicMessages checks a Messages API request: client tools only, no MCP servers, no
// container (the code execution tool's).
func anthropicMessages(m map[string]any) string {
	for _, k := range []string{"mcp_servers", "container"} {
		if _, ok := m[k]; ok {
			return k + " (the provider connects to MCP servers, or runs code, for the request)"
		}
	}
	list, _ := m["tools"].([]any)
	for i, x := range list {
		t, isObject := x.(map[string]any)
		typ, ok := t["type"].(string)
		if isObject && (!ok && t["type"] == nil || typ == "custom" || hasPrefix(typ, anthropicClientTools)) {
			continue
		}
		typeText, _ := json.Marshal(t["type"])
		return fmt.Sprintf("tools[%d]: the provider's own tool %s", i, typeText)
	}
	return ""
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// fetched finds, anywhere in v (at path), content the provider would fetch by URL: an OpenAI
// input_image or image_url part whose URL is not a data: URL, an input_file by file_url, an
// Anthropic image or document whose source is a URL.
func fetched(v any, path string) string {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if why := fetched(e, path+"["+strconv.Itoa(i)+"]"); why != "" {
				return why
			}
		}
	case map[string]any:
		at := path
		if at == "" {
			at = "the body"
		}
		typ, _ := x["type"].(string)
		switch typ {
		case "input_image", "image_url":
			u := x["image_url"]
			if o, ok := u.(map[string]any); ok {
				u = o["url"]
			}
			if s, ok := u.(string); ok && !strings.HasPrefix(strings.TrimSpace(strings.ToLower(s)), "data:") {
				return at + ": an image by URL (send it inline, as a data: URL)"
			}
		case "input_file":
			if _, ok := x["file_url"]; ok {
				return at + ": a file by URL (send it inline)"
			}
		case "image", "document":
			if src, ok := x["source"].(map[string]any); ok && src["type"] == "url" {
				return at + ": " + map[string]string{"image": "an image", "document": "a document"}[typ] + " by URL (send it inline, as base64)"
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) { // the place a refusal names is the same every time
			if why := fetched(x[k], path+"."+k); why != "" {
				return why
			}
		}
	}
	return ""
}

// strictJSON reports text that is not one JSON value, or that holds an object with a key twice.
func strictJSON(text []byte) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	type frame struct {
		object, wantKey bool
		keys            map[string]bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return io.ErrUnexpectedEOF
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].wantKey = false
				}
				stack = append(stack, &frame{object: t == '{', wantKey: t == '{', keys: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		default:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				k, _ := t.(string)
				if stack[n-1].keys[k] {
					return fmt.Errorf("the key %q appears twice in one object", k)
				}
				stack[n-1].keys[k] = true
				stack[n-1].wantKey = false
				continue
			}
			valueDone()
		}
		if len(stack) == 0 && dec.More() {
			return errors.New("more than one JSON value")
		}
	}
}
