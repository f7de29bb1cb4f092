package modelfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Stream       bool            `json:"stream"`
	Tools        []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Text *struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

// responsesItem is one input item: a message, a tool call or a tool result.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Name    string          `json:"name"`
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"`
	// Arguments are a tool_search_call's (an object, unlike a function call's string).
	Arguments json.RawMessage `json:"arguments"`
	// Tools are the tools a tool_search_output loaded: namespaces of functions.
	Tools []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"tools"`
}

// openAIShellTools maps the shell tools codex has exposed to how a command
// is put in their arguments; the first one offered wins. codex 0.169.0
// offers exec_command {"cmd": "..."}.
var openAIShellTools = []struct {
	name string
	args func(cmd string) any
}{
	{"exec_command", func(cmd string) any { return map[string]any{"cmd": cmd, "yield_time_ms": execYieldMS} }},
	{"shell_command", func(cmd string) any { return map[string]any{"command": cmd} }},
	{"shell", func(cmd string) any { return map[string]any{"command": []string{"bash", "-lc", cmd}} }},
}

// execYieldMS is how long codex waits for a command before answering with
// a running session (its cap is 30 s; its default, 10 s, would leave a slow
// git commit running while the script moves on). pollYieldMS is how long
// each write_stdin poll of a running command waits.
var execYieldMS, pollYieldMS = 30000, 30000

// runningSession finds codex's note that a command outlived its yield time.
var runningSession = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Process running with session ID (\d+)\s*$`) })

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, rec *Request) func() {
	var req responsesRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.fail(fmt.Errorf("modelfake: POST %s: body is not a Responses request: %v", r.URL.Path, err))
		return func() { openAIError(w, http.StatusBadRequest, "modelfake: body is not JSON: "+err.Error()) }
	}
	rec.Model = req.Model
	rec.Conversation = firstNonEmpty(r.Header.Get("Session-Id"), r.Header.Get("Session_id"), r.Header.Get("Thread-Id"))
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, firstNonEmpty(t.Name, t.Type))
	}
	if req.Text != nil && len(req.Text.Format.Schema) > 0 {
		rec.Schema = req.Text.Format.Schema
	}
	items, err := responsesInput(req.Input)
	if err != nil {
		s.fail(fmt.Errorf("modelfake: POST %s: %v", r.URL.Path, err))
		return func() { openAIError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
	}
	rec.Tools = append(rec.Tools, additionalTools(items)...)
	h := s.history(req.Instructions, items, rec)
	conv, polls, lastOutput := h.conv, h.polls, h.lastOutput

	shell := ""
	var shellArgs func(string) any
	for _, st := range openAIShellTools {
		if shellArgs == nil && contains(rec.Tools, st.name) {
			shell, shellArgs = st.name, st.args
		}
	}
	if shellArgs == nil && contains(rec.Tools, codeModeTool) {
		return s.codeModeTurn(w, req, rec, h)
	}
	if shellArgs == nil {
		// No shell tool: not the agent's conversation (a summary, a title).
		return func() { writeResponse(w, req, rec.Model, nil, "ok") }
	}
	rec.Aux = false
	if m := runningSession().FindStringSubmatch(lastOutput); m != nil && conv.lastAnswerd && contains(rec.Tools, "write_stdin") &&
		(conv.lastCall == shell || conv.lastCall == "write_stdin") {
		// The command is still running: wait for it before the next turn.
		id, _ := strconv.Atoi(m[1])
		args, _ := json.Marshal(map[string]any{"session_id": id, "chars": "", "yield_time_ms": pollYieldMS})
		rec.Turn = conv.shellCalls - 1
		call := map[string]any{"type": "function_call", "name": "write_stdin", "arguments": string(args),
			"call_id": fmt.Sprintf("call_modelfake_%d_poll_%d", rec.Turn, polls)}
		return func() { writeResponse(w, req, rec.Model, call, "") }
	}
	st, err := s.next(conv, "")
	if err != nil {
		s.fail(fmt.Errorf("modelfake: openai conversation %s: %v", rec.Conversation, err))
		return func() { openAIError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
	}
	rec.Turn = st.turn
	switch {
	case st.t.Tool != "":
		return s.toolTurn(w, req, rec, st, h)
	case st.t.Shell != "":
		args, _ := json.Marshal(shellArgs(st.t.Shell))
		call := map[string]any{"type": "function_call", "name": shell, "arguments": string(args),
			"call_id": fmt.Sprintf("call_modelfake_%d", st.turn)}
		return func() { writeResponse(w, req, rec.Model, call, "") }
	case st.t.JSON != nil:
		return func() { writeResponse(w, req, rec.Model, nil, string(st.t.JSON)) }
	default:
		return func() { writeResponse(w, req, rec.Model, nil, st.t.Text) }
	}
}

// responsesHistory is what a Responses request's input says of the conversation so far.
type responsesHistory struct {
	conv       conversation
	polls      int               // write_stdin polls made
	lastOutput string            // the last tool output
	searched   map[string]bool   // queries of tool_search calls made
	loaded     map[string]string // a tool tool_search loaded -> its namespace
}

// history reads the input items: the prompt and the tool outputs go to rec.
func (s *Server) history(instructions string, items []responsesItem, rec *Request) responsesHistory {
	h := responsesHistory{searched: map[string]bool{}, loaded: map[string]string{}}
	var prompt []string
	if instructions != "" {
		prompt = append(prompt, instructions)
	}
	answered := map[string]bool{}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			if it.Role != "assistant" {
				prompt = append(prompt, contentText(it.Content)...)
			}
		case "function_call", "custom_tool_call", "local_shell_call":
			h.call(it, s.scriptedTool(it.Name))
		case "tool_search_call":
			var q struct {
				Query string `json:"query"`
			}
			_ = json.Unmarshal(it.Arguments, &q)
			h.searched[q.Query] = true
		case "tool_search_output":
			for _, ns := range it.Tools {
				for _, f := range ns.Tools {
					h.loaded[f.Name] = ns.Name
				}
			}
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			answered[it.CallID] = true
			h.lastOutput = strings.Join(contentText(it.Output), "\n")
			rec.ToolOutputs = append(rec.ToolOutputs, h.lastOutput)
		}
	}
	h.conv.lastAnswerd = answered[h.conv.lastCallID]
	rec.Prompt = strings.Join(prompt, "\n")
	return h
}

// call records a tool call of the history; scripted calls (the shell's, a Tool turn's) count.
func (h *responsesHistory) call(it responsesItem, scripted bool) {
	h.conv.lastCall, h.conv.lastCallID = it.Name, it.CallID
	if isOpenAIShell(it.Name) || it.Type == "local_shell_call" || scripted || it.Type == "custom_tool_call" && it.Name == codeModeTool {
		h.conv.shellCalls++
	}
	if it.Name == "write_stdin" {
		h.polls++
	}
}

// toolTurn plays a Tool turn: the offered tool, or one tool_search loaded (in its namespace),
// or first a tool_search for it when codex deferred it.
func (s *Server) toolTurn(w http.ResponseWriter, req responsesRequest, rec *Request, st step, h responsesHistory) func() {
	reply := func(call map[string]any) func() { return func() { writeResponse(w, req, rec.Model, call, "") } }
	callID := fmt.Sprintf("call_modelfake_%d", st.turn)
	name, ok := offered(rec.Tools, st.t.Tool)
	if ns, found := h.loaded[st.t.Tool]; !ok && found {
		return reply(map[string]any{"type": "function_call", "namespace": ns, "name": st.t.Tool, "arguments": toolArgs(st.t.Args), "call_id": callID})
	}
	if !ok && contains(rec.Tools, "tool_search") && !h.searched[st.t.Tool] {
		// codex defers MCP tools behind its client-side tool_search: search first.
		return reply(map[string]any{"type": "tool_search_call", "execution": "client", "arguments": map[string]any{"query": st.t.Tool},
			"call_id": callID + "_search"})
	}
	if !ok {
		err := fmt.Errorf("script turn %d calls tool %s, which the CLI does not offer (it offers %s)", st.turn, st.t.Tool, strings.Join(rec.Tools, ", "))
		s.fail(fmt.Errorf("modelfake: openai conversation %s: %v", rec.Conversation, err))
		return func() { openAIError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
	}
	return reply(map[string]any{"type": "function_call", "name": name, "arguments": toolArgs(st.t.Args), "call_id": callID})
}

func toolArgs(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	return string(args)
}

func isOpenAIShell(name string) bool {
	for _, st := range openAIShellTools {
		if st.name == name {
			return true
		}
	}
	return false
}

// responsesInput accepts input as a bare string or a list of items.
func responsesInput(raw json.RawMessage) ([]responsesItem, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []responsesItem{{Type: "message", Role: "user", Content: raw}}, nil
	}
	var items []responsesItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("input is neither a string nor a list of items: %v", err)
	}
	return items, nil
}

// contentText returns the texts of a content value: a string, or a list of
// parts with a "text" field (input_text, output_text, text).
func contentText(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return []string{string(raw)}
	}
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
		out = append(out, contentText(p.Content)...)
	}
	return out
}

// writeResponse answers with one output item: the tool call when call is
// set, else an assistant message holding text. A stream is the event
// sequence of the Responses API, which codex reads up to response.completed.
func writeResponse(w http.ResponseWriter, req responsesRequest, model string, call map[string]any, text string) {
	id := fmt.Sprintf("resp_modelfake_%d", time.Now().UnixNano())
	var item map[string]any
	if call != nil {
		item = map[string]any{"id": "fc_" + id, "status": "completed"}
		for k, v := range call {
			item[k] = v
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	usage := map[string]any{
		"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 110,
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": model, "output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp("completed", []any{item}))
		return
	}
	e := newSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	itemID := item["id"]
	if call != nil {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		if input, ok := item["input"].(string); ok {
			// A custom tool's call (code mode's exec): its input is free text.
			delete(added, "arguments")
			added["input"] = ""
			ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
			for _, c := range chunks(input, 24) {
				ev("response.custom_tool_call_input.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": c})
			}
			ev("response.custom_tool_call_input.done", map[string]any{"item_id": itemID, "output_index": 0, "input": input})
		} else if args, ok := item["arguments"].(string); ok {
			ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
			for _, c := range chunks(args, 24) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": 0, "delta": c})
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": 0, "arguments": args})
		} else {
			// A tool_search_call's arguments are an object, sent whole.
			added["arguments"] = item["arguments"]
			ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		}
	} else {
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": itemID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "part": part})
		for _, c := range chunks(text, 16) {
			ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": c})
		}
		ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": text})
		ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": resp("completed", []any{item})})
}

func openAIError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg, "code": "modelfake"}})
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
