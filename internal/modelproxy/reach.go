package modelproxy

import (
	"encoding/json"
	"fmt"
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
// pinned codex sends); OpenAI's models that search by themselves (search, deep-research) are
// refused by name. Content named by a stored id (file_id, previous_response_id, conversation)
// passes: it reaches no network, and a session can store nothing there (the proxy forwards no
// files route), though it could name what someone else of the organization stored. The body is read whole as JSON: one that is not, or that holds an object
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
// path "": a request with no body). admit (when not nil) is called once the body's decoded cost
// is reckoned and before it is decoded: it waits for that much of the proxy's checking budget,
// and says false when the request went away meanwhile; the release it returns is called once
// the decoded body is let go.
func reachRefusal(path string, text []byte, admit func(cost int64) (release func(), ok bool)) string {
	if path == "" {
		return ""
	}
	var body any // one JSON value, nothing after it (Unmarshal checks the whole text)
	if !json.Valid(text) {
		err := json.Unmarshal(text, &body) // for its message
		return "the request body is not JSON the proxy can check: " + fmt.Sprint(err)
	}
	// Checked before it is decoded: decoded, a value takes about a hundred bytes and an object
	// some hundreds (a body of 33 MB of zeros took 1.2 GB, 20 MB of one-key objects 1.4 GB), so a
	// body that would take more than a model's request does is refused.
	cost, err := scanBody(text)
	if err != nil {
		return "the request body is not JSON the proxy can check: " + err.Error()
	}
	if admit != nil {
		release, ok := admit(cost)
		if !ok {
			return "the request went away while it waited to be checked"
		}
		defer release()
	}
	if err := json.Unmarshal(text, &body); err != nil {
		return "the request body is not JSON the proxy can check: " + err.Error()
	}
	top, ok := body.(map[string]any)
	if !ok {
		return "the request body is not a JSON object"
	}
	var why string
	switch path {
	case "/openai/v1/responses", "/openai/v1/chat/completions":
		// OpenAI's search models (gpt-4o-search-preview, gpt-5-search-api, …) search the web on
		// every request, asked or not; its deep-research models with a search tool.
		if m, _ := top["model"].(string); strings.Contains(strings.ToLower(m), "search") || strings.Contains(strings.ToLower(m), "deep-research") {
			why = fmt.Sprintf("model %q (a model that searches the web itself)", m)
		}
	}
	switch {
	case why != "":
	case path == "/openai/v1/responses":
		why = openAIResponses(top)
	case path == "/openai/v1/chat/completions":
		why = openAIChat(top)
	case path == "/anthropic/v1/messages", path == "/anthropic/v1/messages/count_tokens":
		why = anthropicMessages(top)
	}
	if why == "" {
		why = fetched(body)
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

// fetched finds, anywhere in v, content the provider would fetch by URL: an OpenAI input_image
// or image_url part whose URL is not a data: URL, an input_file by file_url, an Anthropic image or
// document whose source is a URL. It says where, as a location that is the same every time (an
// array's first such element, an object's least key holding one).
func fetched(v any) string {
	why, at := fetchedAt(v)
	if why == "" {
		return ""
	}
	slices.Reverse(at)
	where := strings.TrimPrefix(strings.Join(at, ""), ".")
	if where == "" {
		where = "the body"
	}
	return where + ": " + why
}

// fetchedAt is fetched's walk. The location is gathered on the way back up, as segments (".key",
// "[i]") from the innermost out, and only for content found: the walk carries nothing down, so
// its cost is one visit per node however deep or wide the body is.
func fetchedAt(v any) (string, []string) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if why, at := fetchedAt(e); why != "" {
				return why, append(at, "["+strconv.Itoa(i)+"]")
			}
		}
	case map[string]any:
		typ, _ := x["type"].(string)
		switch typ {
		case "input_image", "image_url":
			u := x["image_url"]
			if o, ok := u.(map[string]any); ok {
				u = o["url"]
			}
			if s, ok := u.(string); ok && !strings.HasPrefix(strings.TrimSpace(strings.ToLower(s)), "data:") {
				return "an image by URL (send it inline, as a data: URL)", nil
			}
		case "input_file":
			if _, ok := x["file_url"]; ok {
				return "a file by URL (send it inline)", nil
			}
		case "image", "document":
			if src, ok := x["source"].(map[string]any); ok && src["type"] == "url" {
				return map[string]string{"image": "an image", "document": "a document"}[typ] + " by URL (send it inline, as base64)", nil
			}
		}
		// Every child is walked (once), and the least key holding such content is named.
		var why, key string
		var at []string
		for k, e := range x {
			if w, a := fetchedAt(e); w != "" && (why == "" || k < key) {
				why, key, at = w, k, a
			}
		}
		if why != "" {
			return why, append(at, "."+key)
		}
	}
	return "", nil
}

// maxDecoded bounds what decoding a request body to check it may allocate, as decodedCost
// reckons it: a long agent session's request of some MB takes some tens of MB.
const maxDecoded = 256 << 20

// What encoding/json allocates to decode into any, at most (measured, slices' growth included):
// per value (an element or a member: its slot, a boxed number or string header), and beyond that
// per object (its map) and per array; a string's bytes are at most the text's.
const (
	decodedPerValue  = 96
	decodedPerObject = 400
	decodedPerArray  = 64
)

// scanBody reckons what decoding text, valid JSON, allocates, and reports an object that holds a
// key twice (compared unescaped: "typ\u0065" is "type"), or text whose decoding would allocate
// more than maxDecoded.
func scanBody(text []byte) (int64, error) {
	type frame struct {
		object  bool
		keys    []string            // an object's keys so far, while they are few
		many    map[string]struct{} // and once they are not
		wantKey bool
	}
	var stack []frame
	// The text's bytes (strings are copied), the top value; then a value more after each comma
	// and in each container opened (an empty one is charged one too), and each container.
	cost := int64(len(text)) + decodedPerValue
	over := func() error {
		return fmt.Errorf("decoded, it would take more than %d MiB, more than a model's request does", maxDecoded>>20)
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '{', '[':
			stack = append(stack, frame{object: c == '{', wantKey: c == '{'})
			cost += decodedPerValue + decodedPerArray
			if c == '{' {
				cost += decodedPerObject - decodedPerArray
			}
			if cost > maxDecoded {
				return 0, over()
			}
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if cost += decodedPerValue; cost > maxDecoded {
				return 0, over()
			}
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true
			}
		case '"':
			end, escaped := i+1, false
			for ; text[end] != '"'; end++ {
				if text[end] == '\\' {
					end++
					escaped = true
				}
			}
			if n := len(stack); n > 0 && stack[n-1].wantKey {
				key := string(text[i+1 : end])
				if escaped {
					_ = json.Unmarshal(text[i:end+1], &key)
				}
				f := &stack[n-1]
				_, seen := f.many[key]
				if seen || f.many == nil && slices.Contains(f.keys, key) {
					return 0, fmt.Errorf("the key %q appears twice in one object", key)
				}
				switch {
				case f.many != nil:
					f.many[key] = struct{}{}
				case len(f.keys) < 16:
					f.keys = append(f.keys, key)
				default:
					f.many = map[string]struct{}{key: {}}
					for _, k := range f.keys {
						f.many[k] = struct{}{}
					}
				}
				f.wantKey = false
			}
			i = end
		}
	}
	return cost, nil
}
