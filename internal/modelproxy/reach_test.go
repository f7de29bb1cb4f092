package modelproxy

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// codexBody is what the pinned codex sends (its tools' types), web search cached.
const codexBody = `{"model":"gpt-5.5","stream":true,"store":false,"tool_choice":"auto",
"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"see https://example.com"},
  {"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}],
"tools":[{"type":"function","name":"shell","parameters":{"type":"object","properties":{"url":{"type":"string"}}}},
  {"type":"custom","name":"apply_patch","format":{"type":"grammar"}},
  {"type":"namespace","name":"mcp__autonomy","tools":[{"type":"function","name":"ask_person"}]},
  {"type":"tool_search","execution":"client"},
  {"type":"web_search","external_web_access":false}]}`

func TestReachRefusal(t *testing.T) {
	const responses, chat, messages, count = "/openai/v1/responses", "/openai/v1/chat/completions", "/anthropic/v1/messages", "/anthropic/v1/messages/count_tokens"
	pass := []struct{ name, path, body string }{
		{"codex's own tools", responses, codexBody},
		{"a chat completion with a function", chat, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}],"tools":[{"type":"function","function":{"name":"f"}}]}`},
		{"claude's own tools", messages, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}},
			{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"https://example.com"}]}]}],
			"tools":[{"name":"Bash","input_schema":{}},{"type":"custom","name":"x","input_schema":{}},{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}],
			"context_management":{"edits":[]},"thinking":{"type":"enabled","budget_tokens":1024}}`},
		{"a tool call asking for a URL, in the history", messages, `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"WebFetch","input":{"url":"https://example.com"}}]}]}`},
		{"no body to check (a GET)", "", ``},
	}
	for _, c := range pass {
		if why := reachRefusal(c.path, []byte(c.body), nil); why != "" {
			t.Errorf("%s: refused: %s", c.name, why)
		}
	}
	refused := []struct{ name, path, body, want string }{
		{"live web search", responses, `{"tools":[{"type":"web_search"}]}`, `tools[0]: web_search with live access`},
		{"live web search, said so", responses, `{"tools":[{"type":"web_search","external_web_access":true}]}`, `tools[0]: web_search with live access`},
		{"the preview web search", responses, `{"tools":[{"type":"function"},{"type":"web_search_preview"}]}`, `tools[1]: the provider's own tool "web_search_preview"`},
		{"a remote MCP server", responses, `{"tools":[{"type":"mcp","server_label":"x","server_url":"https://evil.example/mcp"}]}`, `tools[0]: the provider's own tool "mcp"`},
		{"a remote MCP server in a namespace", responses, `{"tools":[{"type":"namespace","tools":[{"type":"function"},{"type":"mcp"}]}]}`, `tools[0].tools[1]: the provider's own tool "mcp"`},
		{"the provider's tool search", responses, `{"tools":[{"type":"tool_search"}]}`, `the provider's own tool "tool_search"`},
		{"file search", responses, `{"tools":[{"type":"file_search","vector_store_ids":["vs_1"]}]}`, `"file_search"`},
		{"code interpreter", responses, `{"tools":[{"type":"code_interpreter"}]}`, `"code_interpreter"`},
		{"image generation", responses, `{"tools":[{"type":"image_generation"}]}`, `"image_generation"`},
		{"a tool that is not an object", responses, `{"tools":["mcp"]}`, `tools[0]: the provider's own tool ""`},
		{"a stored prompt", responses, `{"prompt":{"id":"pmpt_1"}}`, `prompt (a stored prompt`},
		{"a hosted tool choice", responses, `{"tool_choice":{"type":"web_search_preview"}}`, `tool_choice of type "web_search_preview"`},
		{"an image by URL", responses, `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://evil.example/?d=secret"}]}]}`, `input[0].content[0]: an image by URL`},
		{"an image by URL, in upper case", responses, `{"input":[{"type":"input_image","image_url":" HTTPS://evil.example/"}]}`, `an image by URL`},
		{"a file by URL", responses, `{"input":[{"type":"input_file","file_url":"https://evil.example/f.pdf"}]}`, `input[0]: a file by URL`},
		{"chat's web search", chat, `{"web_search_options":{}}`, `web_search_options`},
		{"chat's search model", chat, `{"model":"gpt-4o-search-preview","messages":[{"role":"user","content":"open https://evil.example/?d=x"}]}`, `model "gpt-4o-search-preview" (a model that searches the web itself)`},
		{"a search model on responses", responses, `{"model":"GPT-5-Search-API","input":"hi"}`, `a model that searches the web itself`},
		{"a deep-research model", responses, `{"model":"o3-deep-research","input":"hi"}`, `a model that searches the web itself`},
		{"chat's image by URL", chat, `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://evil.example/x.png"}}]}]}`, `messages[0].content[0]: an image by URL`},
		{"chat's provider tool", chat, `{"tools":[{"type":"mcp"}]}`, `tools[0]: the provider's own tool "mcp"`},
		{"claude's web search", messages, `{"tools":[{"name":"Bash"},{"type":"web_search_20250305","name":"web_search"}]}`, `tools[1]: the provider's own tool "web_search_20250305"`},
		{"claude's web fetch", count, `{"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`, `"web_fetch_20250910"`},
		{"claude's code execution", messages, `{"tools":[{"type":"code_execution_20250825","name":"code_execution"}]}`, `"code_execution_20250825"`},
		{"the MCP connector", messages, `{"mcp_servers":[{"type":"url","url":"https://evil.example/mcp","name":"x"}]}`, `mcp_servers`},
		{"a container", messages, `{"container":"container_1"}`, `container`},
		{"a tool whose type is not a string", messages, `{"tools":[{"type":1}]}`, `tools[0]: the provider's own tool 1`},
		{"a document by URL in a tool result", messages, `{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"document","source":{"type":"url","url":"https://evil.example/?d=x"}}]}]}]}`, `messages[0].content[0].content[0]: a document by URL`},
		{"an image by URL", messages, `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://evil.example/i.png"}}]}]}`, `an image by URL`},
		{"a key twice, the second list empty", responses, `{"tools":[{"type":"mcp"}],"tools":[]}`, `the key "tools" appears twice`},
		{"a key twice, the first list empty", responses, `{"tools":[],"tools":[{"type":"mcp"}]}`, `the key "tools" appears twice`},
		{"a key twice, deep down", messages, `{"messages":[{"content":[{"type":"image","source":{"type":"base64","type":"url"}}]}]}`, `the key "type" appears twice`},
		{"a key twice, escaped", responses, `{"tools":[{"type":"function","typ\u0065":"mcp"}]}`, `the key "type" appears twice`},
		{"not JSON", responses, `{"tools":[`, `not JSON the proxy can check`},
		{"two values", responses, `{"tools":[]} {"tools":[{"type":"mcp"}]}`, `after top-level value`},
		{"not an object", responses, `[{"type":"mcp"}]`, `not a JSON object`},
		{"empty", messages, ``, `not JSON the proxy can check`},
	}
	for _, c := range refused {
		why := reachRefusal(c.path, []byte(c.body), nil)
		if !strings.Contains(why, c.want) {
			t.Errorf("%s: %q, want it to say %q", c.name, why, c.want)
		}
	}
}

// BenchmarkReachRefusal checks a 2 MB Responses request shaped as a long codex session's (its
// tools, and a history of messages and tool calls), as the proxy does before forwarding it.
func BenchmarkReachRefusal(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"model":"gpt-5.5","stream":true,"tools":[{"type":"function","name":"shell","parameters":{"type":"object"}},{"type":"custom","name":"apply_patch"},{"type":"web_search","external_web_access":false}],"input":[`)
	for i := 0; body.Len() < 2<<20; i++ {
		if i > 0 {
			body.WriteString(",")
		}
		body.WriteString(`{"type":"message","role":"user","content":[{"type":"input_text","text":"` + strings.Repeat("line of a file read by the shell tool ", 20) + `"}]},`)
		body.WriteString(`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"a.go\"]}","call_id":"c1"}`)
	}
	body.WriteString(`]}`)
	text := []byte(body.String())
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if why := reachRefusal("/openai/v1/responses", text, nil); why != "" {
			b.Fatal(why)
		}
	}
}

// A deep body of long keys costs memory in proportion to its size, not to its depth times its keys
// (the place of each node was a string built and kept: a 45 KB gzip upload asked for some 100 GB).
func TestReachRefusalMemoryIsBounded(t *testing.T) {
	key := strings.Repeat("k", 5000)
	var b strings.Builder
	for range 400 {
		b.WriteString(`{"` + key + `":`)
	}
	b.WriteString(`"x"`)
	b.WriteString(strings.Repeat("}", 400))
	text := []byte(b.String()) // 2 MB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if why := reachRefusal("/anthropic/v1/messages", text, nil); why != "" {
		t.Fatal(why)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("checking a 2 MB body 400 deep allocated %d MB", n>>20)
	}
}

// The walk for content by URL carries nothing down: a body as deep as the decoder allows and wide
// at its bottom allocates nothing to walk (the place of each node was carried down as a slice of
// segments, which every element of an array copied whole once the slice was full: a 294-byte gzip
// of such a body took 18 s of CPU).
func TestFetchedWalkAllocatesNothing(t *testing.T) {
	const depth, width = 2560, 20000 // 2560: a depth where that slice was full
	var b strings.Builder
	b.WriteString(`{"a":`)
	b.WriteString(strings.Repeat("[", depth))
	b.WriteString("0" + strings.Repeat(",0", width-1))
	b.WriteString(strings.Repeat("]", depth))
	b.WriteString(`,"b":{"type":"image","source":{"type":"base64"}}}`)
	var v any
	if err := json.Unmarshal([]byte(b.String()), &v); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(1, func() {
		if why := fetched(v); why != "" {
			t.Fatal(why)
		}
	}); allocs != 0 {
		t.Errorf("walking a body %d deep and %d wide allocated %v times", depth, width, allocs)
	}
}

// Where a body holds content by URL in several places, the refusal names the same one every time:
// an array's first, an object's least key.
func TestFetchedNamesOnePlace(t *testing.T) {
	body := `{"z":{"type":"input_file","file_url":"https://e.example/"},"m":[{"type":"text"},{"c":{"type":"image","source":{"type":"url"}}},{"type":"input_image","image_url":"https://e.example/"}],"y":[]}`
	for range 20 { // a map's order changes from one walk to the next
		if why := reachRefusal("/openai/v1/responses", []byte(body), nil); !strings.HasPrefix(why, "m[1].c: an image by URL") {
			t.Fatalf("%q, want m[1].c", why)
		}
	}
}

// A body that would take more to decode than a model's request does is refused before it is
// decoded, whatever its shape: zeros (33 MB took 1.2 GB) and chains of one-key objects (20 MB,
// 68 KB gzipped, took 1.4 GB); what is checked allocates at most about maxDecoded.
func TestReachRefusalBoundsWhatDecodingTakes(t *testing.T) {
	for name, text := range map[string]string{
		"zeros":  `{"input":[0` + strings.Repeat(",0", maxDecoded/decodedPerValue) + `]}`,
		"chains": `{"input":[` + strings.Repeat(strings.Repeat(`{"":`, 16)+"0"+strings.Repeat("}", 16)+",", maxDecoded/decodedPerObject/16) + `0]}`,
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		why := reachRefusal("/openai/v1/responses", []byte(text), nil)
		runtime.ReadMemStats(&after)
		if !strings.Contains(why, "decoded, it would take more than 256 MiB") {
			t.Errorf("%s (%d MB): %q", name, len(text)>>20, why)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 { // the scan's garbage; decoding took 250 MB
			t.Errorf("refusing %s (%d MB) allocated %d MB", name, len(text)>>20, n>>20)
		}
	}
	// What passes allocates no more than the bound says.
	for name, text := range map[string]string{
		"zeros":  `{"input":[0` + strings.Repeat(",0", maxDecoded/decodedPerValue/2) + `]}`,
		"chains": `{"input":[` + strings.Repeat(strings.Repeat(`{"":`, 16)+"0"+strings.Repeat("}", 16)+",", maxDecoded/decodedPerObject/32) + `0]}`,
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if why := reachRefusal("/openai/v1/responses", []byte(text), nil); why != "" {
			t.Errorf("%s within the bound: %q", name, why)
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > maxDecoded+64<<20 {
			t.Errorf("checking %s (%d MB) allocated %d MB, past the bound", name, len(text)>>20, n>>20)
		}
	}
}
