package modelfake_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
)

type event struct {
	name string
	data map[string]any
}

// post sends body as JSON and returns the status and the SSE events (or,
// for a JSON answer, one event named "json").
func post(t *testing.T, url string, header map[string]string, body any) (int, []event) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("answer is neither SSE nor JSON: %q", raw)
		}
		return resp.StatusCode, []event{{name: "json", data: m}}
	}
	var evs []event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event %s: bad data %q", name, line)
			}
			if m["type"] != name {
				t.Fatalf("event %s carries type %v", name, m["type"])
			}
			evs = append(evs, event{name, m})
		}
	}
	return resp.StatusCode, evs
}

// names lists the event names, a run of one delta event written once: how
// a text is cut into deltas is not part of the contract.
func names(evs []event) string {
	var n []string
	for _, e := range evs {
		if len(n) > 0 && n[len(n)-1] == e.name && strings.HasSuffix(e.name, "delta") {
			continue
		}
		n = append(n, e.name)
	}
	return strings.Join(n, " ")
}

var codexTools = []any{map[string]any{"type": "function", "name": "exec_command"}, map[string]any{"type": "web_search"}}

func codexRequest(items ...any) map[string]any {
	input := append([]any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "be careful"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "SKILL: x PARAM=1"}}},
	}, items...)
	return map[string]any{"model": "gpt-test", "stream": true, "instructions": "base", "input": input, "tools": codexTools}
}

func TestOpenAIPlaysScript(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Shell: "echo hi > proof.txt"}, modelfake.Turn{Text: "All done, ünïcode included."})
	defer fake.Close()
	url := fake.OpenAIBaseURL() + "/responses"
	hdr := map[string]string{"Session-Id": "conv-1", "Authorization": "Bearer k"}

	code, evs := post(t, url, hdr, codexRequest())
	want := "response.created response.in_progress response.output_item.added response.function_call_arguments.delta " +
		"response.function_call_arguments.done response.output_item.done response.completed"
	if code != 200 || names(evs) != want {
		t.Fatalf("first answer %d: %s\nwant %s", code, names(evs), want)
	}
	item := evs[len(evs)-2].data["item"].(map[string]any)
	var args map[string]any
	if err := json.Unmarshal([]byte(item["arguments"].(string)), &args); err != nil || args["cmd"] != "echo hi > proof.txt" ||
		item["name"] != "exec_command" || item["type"] != "function_call" {
		t.Fatalf("tool call item = %v (%v)", item, err)
	}
	usage := evs[len(evs)-1].data["response"].(map[string]any)["usage"].(map[string]any)
	if usage["total_tokens"] == nil || usage["input_tokens_details"] == nil {
		t.Errorf("response.completed usage = %v", usage)
	}
	for i, e := range evs {
		if e.data["sequence_number"] != float64(i) {
			t.Errorf("event %d sequence_number = %v", i, e.data["sequence_number"])
		}
	}

	call := map[string]any{"type": "function_call", "name": "exec_command", "arguments": item["arguments"], "call_id": item["call_id"]}
	out := map[string]any{"type": "function_call_output", "call_id": item["call_id"], "output": "Process exited with code 0\nOutput:\nwrote"}
	code, evs = post(t, url, hdr, codexRequest(call, out))
	var text strings.Builder
	for _, e := range evs {
		if e.name == "response.output_text.delta" {
			text.WriteString(e.data["delta"].(string))
		}
	}
	if code != 200 || text.String() != "All done, ünïcode included." {
		t.Fatalf("second answer %d: text %q (%s)", code, text.String(), names(evs))
	}
	done := evs[len(evs)-2].data["item"].(map[string]any)
	if done["type"] != "message" || done["role"] != "assistant" {
		t.Errorf("final item = %v", done)
	}
	if err := fake.Err(); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Turn != 0 || reqs[1].Turn != 1 || reqs[1].Conversation != "conv-1" || reqs[0].API != modelfake.OpenAI {
		t.Fatalf("requests = %+v", reqs)
	}
	if reqs[0].Prompt != "base\nbe careful\nSKILL: x PARAM=1" {
		t.Errorf("prompt = %q", reqs[0].Prompt)
	}
	if len(reqs[1].ToolOutputs) != 1 || !strings.Contains(reqs[1].ToolOutputs[0], "wrote") {
		t.Errorf("tool outputs = %q", reqs[1].ToolOutputs)
	}
	if reqs[0].Header.Get("Authorization") != "Bearer k" {
		t.Errorf("credential not kept: %v", reqs[0].Header)
	}
}

func TestOpenAIStructuredAndNonStreaming(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{JSON: json.RawMessage(`{"verdict":"approve"}`)})
	defer fake.Close()
	body := codexRequest()
	body["stream"] = false
	body["text"] = map[string]any{"format": map[string]any{"type": "json_schema", "strict": true, "schema": map[string]any{"type": "object"}}}
	code, evs := post(t, fake.OpenAIBaseURL()+"/responses", nil, body)
	if code != 200 || evs[0].name != "json" {
		t.Fatalf("answer %d %v", code, evs)
	}
	out := evs[0].data["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)
	if out["text"] != `{"verdict":"approve"}` {
		t.Errorf("structured text = %v", out["text"])
	}
	if r := fake.Requests()[0]; string(r.Schema) != `{"type":"object"}` {
		t.Errorf("schema = %s", r.Schema)
	}
}

func claudeRequest(messages ...any) map[string]any {
	msgs := append([]any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>env</system-reminder>"},
		map[string]any{"type": "text", "text": "SKILL: x PARAM=1"}}}}, messages...)
	return map[string]any{"model": "claude-test", "stream": true, "max_tokens": 100,
		"system":   []any{map[string]any{"type": "text", "text": "You are Claude Code."}},
		"messages": msgs, "tools": []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Read"}}}
}

// assemble rebuilds the content blocks of a Messages stream.
func assemble(t *testing.T, evs []event) ([]map[string]any, string) {
	t.Helper()
	var blocks []map[string]any
	partial := map[int]string{}
	stop := ""
	for _, e := range evs {
		switch e.name {
		case "content_block_start":
			blocks = append(blocks, e.data["content_block"].(map[string]any))
		case "content_block_delta":
			i := int(e.data["index"].(float64))
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				blocks[i]["text"] = blocks[i]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[i] += d["partial_json"].(string)
			}
		case "message_delta":
			stop = e.data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	for i, p := range partial {
		var in map[string]any
		if err := json.Unmarshal([]byte(p), &in); err != nil {
			t.Fatalf("tool input %q: %v", p, err)
		}
		blocks[i]["input"] = in
	}
	return blocks, stop
}

func TestAnthropicPlaysScript(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Shell: "git commit -am proof"}, modelfake.Turn{Text: "Committed."})
	defer fake.Close()
	url := fake.AnthropicBaseURL() + "/v1/messages?beta=true"
	hdr := map[string]string{"X-Claude-Code-Session-Id": "s-1", "X-Api-Key": "sk-ant"}

	code, evs := post(t, url, hdr, claudeRequest())
	want := "message_start content_block_start ping content_block_delta content_block_stop message_delta message_stop"
	if code != 200 || names(evs) != want {
		t.Fatalf("first answer %d: %s", code, names(evs))
	}
	blocks, stop := assemble(t, evs)
	if stop != "tool_use" || blocks[0]["type"] != "tool_use" || blocks[0]["name"] != "Bash" ||
		blocks[0]["input"].(map[string]any)["command"] != "git commit -am proof" {
		t.Fatalf("tool call = %v stop %s", blocks, stop)
	}
	id := blocks[0]["id"]
	history := []any{
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": blocks[0]["input"]}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id,
			"content": []any{map[string]any{"type": "text", "text": "[main abc123] proof"}}}}},
	}
	_, evs = post(t, url, hdr, claudeRequest(history...))
	blocks, stop = assemble(t, evs)
	if stop != "end_turn" || blocks[0]["text"] != "Committed." {
		t.Fatalf("final answer = %v stop %s", blocks, stop)
	}
	if err := fake.Err(); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()
	if len(r) != 2 || r[0].API != modelfake.Anthropic || r[0].Path != "/v1/messages" || r[1].Conversation != "s-1" {
		t.Fatalf("requests = %+v", r)
	}
	if r[0].Prompt != "You are Claude Code.\n<system-reminder>env</system-reminder>\nSKILL: x PARAM=1" {
		t.Errorf("prompt = %q", r[0].Prompt)
	}
	if len(r[1].ToolOutputs) != 1 || r[1].ToolOutputs[0] != "[main abc123] proof" {
		t.Errorf("tool outputs = %q", r[1].ToolOutputs)
	}
}

func TestAnthropicStructuredOutputTool(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{JSON: json.RawMessage(`{"verdict":"approve"}`)})
	defer fake.Close()
	url := fake.AnthropicBaseURL() + "/v1/messages"
	body := claudeRequest()
	body["tools"] = append(body["tools"].([]any), map[string]any{"name": "StructuredOutput", "input_schema": map[string]any{"type": "object"}})
	_, evs := post(t, url, nil, body)
	blocks, stop := assemble(t, evs)
	if stop != "tool_use" || blocks[0]["name"] != "StructuredOutput" || blocks[0]["input"].(map[string]any)["verdict"] != "approve" {
		t.Fatalf("structured call = %v %s", blocks, stop)
	}
	// Should the CLI come back after the StructuredOutput call, the
	// conversation closes with text and the script is not consumed.
	body = claudeRequest(
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": blocks[0]["id"], "name": "StructuredOutput", "input": blocks[0]["input"]}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": blocks[0]["id"], "content": "ok"}}},
	)
	body["tools"] = append(body["tools"].([]any), map[string]any{"name": "StructuredOutput"})
	body["stream"] = false
	code, evs := post(t, url, nil, body)
	if code != 200 || evs[0].data["stop_reason"] != "end_turn" {
		t.Fatalf("closing answer %d %v", code, evs[0].data)
	}
	if err := fake.Err(); err != nil {
		t.Fatal(err)
	}
	if r := fake.Requests(); string(r[0].Schema) != `{"type":"object"}` || r[1].Turn != -1 || r[1].Aux {
		t.Errorf("requests = %+v", r)
	}
}

func TestAuxiliaryRequestsDoNotConsumeScript(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "final"})
	defer fake.Close()
	for _, probe := range []struct{ method, path string }{{"HEAD", "/api/hello"}, {"GET", "/v1/models"}} {
		req, _ := http.NewRequest(probe.method, fake.URL()+probe.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %v %v", probe.method, probe.path, resp, err)
		}
		resp.Body.Close()
	}
	code, evs := post(t, fake.AnthropicBaseURL()+"/v1/messages/count_tokens", nil, claudeRequest())
	if code != 200 || evs[0].data["input_tokens"] == nil {
		t.Fatalf("count_tokens: %d %v", code, evs)
	}
	title := claudeRequest()
	delete(title, "tools")
	_, evs = post(t, fake.AnthropicBaseURL()+"/v1/messages", nil, title)
	if blocks, _ := assemble(t, evs); blocks[0]["text"] != "ok" {
		t.Fatalf("side request answer = %v", blocks)
	}
	noShell := codexRequest()
	noShell["tools"] = []any{}
	post(t, fake.OpenAIBaseURL()+"/responses", nil, noShell)
	// The script is still at its first turn for the real conversation.
	_, evs = post(t, fake.AnthropicBaseURL()+"/v1/messages", nil, claudeRequest())
	if blocks, _ := assemble(t, evs); blocks[0]["text"] != "final" {
		t.Fatalf("scripted answer = %v", blocks)
	}
	if err := fake.Err(); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) != 6 || len(fake.Scripted()) != 1 {
		t.Fatalf("%d requests, %d scripted", len(reqs), len(fake.Scripted()))
	}
	for _, r := range reqs[:5] {
		if !r.Aux || r.Turn != -1 {
			t.Errorf("%s %s: aux=%v turn=%d", r.Method, r.Path, r.Aux, r.Turn)
		}
	}
}

func TestScriptViolations(t *testing.T) {
	t.Run("exhausted", func(t *testing.T) {
		fake := modelfake.Start(modelfake.Turn{Shell: "true"})
		defer fake.Close()
		call := map[string]any{"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"}
		out := map[string]any{"type": "function_call_output", "call_id": "c1", "output": "done"}
		code, evs := post(t, fake.OpenAIBaseURL()+"/responses", nil, codexRequest(call, out))
		if code != 400 || !strings.Contains(fmt.Sprint(evs[0].data), "script exhausted") {
			t.Fatalf("answer %d %v", code, evs)
		}
		if err := fake.Err(); err == nil || !strings.Contains(err.Error(), "script exhausted: 1 shell calls made, the script has 1 turns") {
			t.Fatalf("Err = %v", err)
		}
	})
	t.Run("tool result missing", func(t *testing.T) {
		fake := modelfake.Start(modelfake.Turn{Shell: "true"}, modelfake.Turn{Text: "x"})
		defer fake.Close()
		body := claudeRequest(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{}}}})
		code, _ := post(t, fake.AnthropicBaseURL()+"/v1/messages", nil, body)
		if err := fake.Err(); code != 400 || err == nil || !strings.Contains(err.Error(), "tool result missing for call t1 (Bash)") {
			t.Fatalf("answer %d, Err = %v", code, err)
		}
	})
	t.Run("body not JSON", func(t *testing.T) {
		fake := modelfake.Start(modelfake.Turn{Text: "x"})
		defer fake.Close()
		for _, path := range []string{"/v1/responses", "/v1/messages"} {
			resp, err := http.Post(fake.URL()+path, "application/json", strings.NewReader("{nope"))
			if err != nil || resp.StatusCode != 400 {
				t.Fatalf("%s: %v %v", path, resp, err)
			}
			resp.Body.Close()
		}
		if err := fake.Err(); err == nil || strings.Count(err.Error(), "is not a") != 2 {
			t.Fatalf("Err = %v", err)
		}
	})
	t.Run("unsupported encoding", func(t *testing.T) {
		fake := modelfake.Start(modelfake.Turn{Text: "x"})
		defer fake.Close()
		req, _ := http.NewRequest("POST", fake.URL()+"/v1/responses", strings.NewReader("x"))
		req.Header.Set("Content-Encoding", "zstd")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 400 {
			t.Fatalf("%v %v", resp, err)
		}
		resp.Body.Close()
		if err := fake.Err(); err == nil || !strings.Contains(err.Error(), `unsupported Content-Encoding "zstd"`) {
			t.Fatalf("Err = %v", err)
		}
	})
	for name, script := range map[string][]modelfake.Turn{
		"empty":             nil,
		"two fields":        {{Shell: "true", Text: "x"}},
		"no field":          {{}},
		"final not last":    {{Text: "x"}, {Shell: "true"}},
		"invalid JSON turn": {{JSON: json.RawMessage(`{`)}},
	} {
		t.Run("script "+name, func(t *testing.T) {
			fake := modelfake.Start(script...)
			defer fake.Close()
			if fake.Err() == nil {
				t.Fatalf("Start(%+v) reported no error", script)
			}
		})
	}
}

func TestGzipBody(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "x"})
	defer fake.Close()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_ = json.NewEncoder(zw).Encode(codexRequest())
	zw.Close()
	req, _ := http.NewRequest("POST", fake.OpenAIBaseURL()+"/responses", &buf)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if err := fake.Err(); err != nil || !strings.Contains(fake.Requests()[0].Prompt, "SKILL: x") {
		t.Fatalf("Err = %v, prompt %q", err, fake.Requests()[0].Prompt)
	}
}

// Many conversations at once each play the script from its start.
func TestConcurrentConversations(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Shell: "echo one"}, modelfake.Turn{Shell: "echo two"}, modelfake.Turn{Text: "end"})
	defer fake.Close()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			hdr := map[string]string{"X-Claude-Code-Session-Id": fmt.Sprint("s", g)}
			var history []any
			for turn := 0; turn < 3; turn++ {
				_, evs := post(t, fake.AnthropicBaseURL()+"/v1/messages", hdr, claudeRequest(history...))
				blocks, stop := assemble(t, evs)
				if turn == 2 {
					if stop != "end_turn" || blocks[0]["text"] != "end" {
						t.Errorf("conversation %d: final = %v", g, blocks)
					}
					return
				}
				history = append(history,
					map[string]any{"role": "assistant", "content": []any{blocks[0]}},
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": blocks[0]["id"], "content": "out"}}})
				_ = fake.Requests()
			}
		}(g)
	}
	wg.Wait()
	if err := fake.Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Scripted()); n != 24 {
		t.Fatalf("%d scripted requests, want 24", n)
	}
}

func TestOpenAIPollsRunningCommand(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Shell: "sleep 60"}, modelfake.Turn{Text: "end"})
	defer fake.Close()
	url := fake.OpenAIBaseURL() + "/responses"
	tools := []any{map[string]any{"type": "function", "name": "exec_command"}, map[string]any{"type": "function", "name": "write_stdin"}}
	req := func(items ...any) map[string]any {
		r := codexRequest(items...)
		r["tools"] = tools
		return r
	}
	call := map[string]any{"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c0"}
	running := map[string]any{"type": "function_call_output", "call_id": "c0",
		"output": "Chunk ID: a\nWall time: 30 seconds\nProcess running with session ID 4242\nOriginal token count: 0\nOutput:\n"}
	_, evs := post(t, url, nil, req(call, running))
	item := evs[len(evs)-2].data["item"].(map[string]any)
	var args map[string]any
	_ = json.Unmarshal([]byte(item["arguments"].(string)), &args)
	if item["name"] != "write_stdin" || args["session_id"] != float64(4242) || args["chars"] != "" {
		t.Fatalf("poll = %v", item)
	}
	poll := map[string]any{"type": "function_call", "name": "write_stdin", "arguments": item["arguments"], "call_id": item["call_id"]}
	exited := map[string]any{"type": "function_call_output", "call_id": item["call_id"], "output": "Process exited with code 0\nOutput:\nfinished"}
	_, evs = post(t, url, nil, req(call, running, poll, exited))
	if final := evs[len(evs)-2].data["item"].(map[string]any); final["type"] != "message" {
		t.Fatalf("after the command exited: %v", final)
	}
	// A command's own output that merely mentions a session is not a poll.
	spoof := map[string]any{"type": "function_call_output", "call_id": "c0", "output": "Output:\nsee: Process running with session ID 1 here"}
	_, evs = post(t, url, nil, req(call, spoof))
	if final := evs[len(evs)-2].data["item"].(map[string]any); final["type"] != "message" {
		t.Fatalf("spoofed output was polled: %v", final)
	}
	if err := fake.Err(); err != nil {
		t.Fatal(err)
	}
	if r := fake.Requests(); r[0].Turn != 0 || r[1].Turn != 1 || r[2].Turn != 1 {
		t.Errorf("turns = %d %d %d", r[0].Turn, r[1].Turn, r[2].Turn)
	}
}
