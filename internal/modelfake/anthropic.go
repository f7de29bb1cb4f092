package modelfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// messagesRequest is the part of a Messages API request the fake reads.
type messagesRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Stream   bool            `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// messagesBlock is one content block of a message.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

const (
	// anthropicShellTool is Claude Code's shell tool; its input is
	// {"command": "...", "description": "...", "timeout": ms}; the fake asks
	// for the 10 minute maximum (the default is 2).
	anthropicShellTool = "Bash"
	// anthropicStructuredTool is the tool Claude Code adds under
	// --json-schema: the model calls it with the result as its input.
	anthropicStructuredTool = "StructuredOutput"
)

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, rec *Request) func() {
	var req messagesRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.fail(fmt.Errorf("modelfake: POST %s: body is not a Messages request: %v", r.URL.Path, err))
		return func() { anthropicError(w, http.StatusBadRequest, "modelfake: body is not JSON: "+err.Error()) }
	}
	rec.Model = req.Model
	rec.Conversation = r.Header.Get("X-Claude-Code-Session-Id")
	structured := ""
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
		if t.Name == anthropicStructuredTool {
			structured = t.Name
			rec.Schema = t.InputSchema
		}
	}
	prompt := contentText(req.System)
	var conv conversation
	answered := map[string]bool{}
	for _, m := range req.Messages {
		blocks, err := messageBlocks(m.Content)
		if err != nil {
			s.fail(fmt.Errorf("modelfake: POST %s: %v", r.URL.Path, err))
			return func() { anthropicError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if m.Role != "assistant" {
					prompt = append(prompt, b.Text)
				}
			case "tool_use":
				conv.lastCall, conv.lastCallID = b.Name, b.ID
				if b.Name == anthropicShellTool || s.scriptedTool(b.Name) {
					conv.shellCalls++
				}
			case "tool_result":
				answered[b.ToolUseID] = true
				rec.ToolOutputs = append(rec.ToolOutputs, strings.Join(contentText(b.Content), "\n"))
			}
		}
	}
	conv.lastAnswerd = answered[conv.lastCallID]
	rec.Prompt = strings.Join(prompt, "\n")

	if !contains(rec.Tools, anthropicShellTool) {
		// No shell tool: a side request (title, quota probe), not the agent.
		return func() { writeMessage(w, req, nil, "ok") }
	}
	rec.Aux = false
	st, err := s.next(conv, structured)
	if err != nil {
		s.fail(fmt.Errorf("modelfake: anthropic conversation %s: %v", rec.Conversation, err))
		return func() { anthropicError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
	}
	rec.Turn = st.turn
	text := st.t.Text
	var call *toolUse
	switch {
	case st.done:
		text = "Structured result returned."
	case st.t.Tool != "":
		name, ok := offered(rec.Tools, st.t.Tool)
		if !ok {
			err := fmt.Errorf("script turn %d calls tool %s, which the CLI does not offer (it offers %s)", st.turn, st.t.Tool, strings.Join(rec.Tools, ", "))
			s.fail(fmt.Errorf("modelfake: anthropic conversation %s: %v", rec.Conversation, err))
			return func() { anthropicError(w, http.StatusBadRequest, "modelfake: "+err.Error()) }
		}
		var input any = map[string]any{}
		if st.t.Args != nil {
			_ = json.Unmarshal(st.t.Args, &input) // checked valid by Start
		}
		call = &toolUse{id: fmt.Sprintf("toolu_modelfake_%d", st.turn), name: name, input: input}
	case st.t.Shell != "":
		call = &toolUse{id: fmt.Sprintf("toolu_modelfake_%d", st.turn), name: anthropicShellTool,
			input: map[string]any{"command": st.t.Shell, "description": "Run the scripted command", "timeout": 600000}}
	case st.t.JSON != nil && structured != "":
		var input any
		_ = json.Unmarshal(st.t.JSON, &input) // checked valid by Start
		call = &toolUse{id: fmt.Sprintf("toolu_modelfake_%d", st.turn), name: structured, input: input}
	case st.t.JSON != nil:
		text = string(st.t.JSON)
	}
	return func() { writeMessage(w, req, call, text) }
}

// messageBlocks accepts content as a bare string or a list of blocks.
func messageBlocks(raw json.RawMessage) ([]messagesBlock, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []messagesBlock{{Type: "text", Text: text}}, nil
	}
	var blocks []messagesBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("message content is neither a string nor a list of blocks: %v", err)
	}
	return blocks, nil
}

type toolUse struct {
	id, name string
	input    any
}

// writeMessage answers with one content block: the tool call when call is
// set, else text. A stream is the Messages API event sequence.
func writeMessage(w http.ResponseWriter, req messagesRequest, call *toolUse, text string) {
	id := fmt.Sprintf("msg_modelfake_%d", time.Now().UnixNano())
	stop := "end_turn"
	var block map[string]any
	if call != nil {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
	} else {
		block = map[string]any{"type": "text", "text": text}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	if call != nil {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": call.id, "name": call.name, "input": map[string]any{}}})
		e.event("ping", map[string]any{"type": "ping"})
		args, _ := json.Marshal(call.input)
		for _, c := range chunks(string(args), 24) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": c}})
		}
	} else {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.event("ping", map[string]any{"type": "ping"})
		for _, c := range chunks(text, 16) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": c}})
		}
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

func anthropicError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
}
