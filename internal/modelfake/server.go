package modelfake

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Turn is one step of a script. Exactly one field is set.
type Turn struct {
	// Shell asks the CLI to run this shell command (one tool call); the next
	// turn is played once the tool result arrives.
	Shell string
	// Text is a final assistant message.
	Text string
	// JSON is a final structured result: the final message text for codex
	// (--output-schema), the StructuredOutput tool call for claude
	// (--json-schema) or the final message text when that tool is absent.
	JSON json.RawMessage
	// Tool calls a tool the CLI offers other than its shell (an MCP
	// server's, for instance) with Args; the offered tool is the one named
	// Tool or ending in "__"+Tool (how the CLIs qualify MCP tools). The
	// next turn is played once the tool result arrives.
	Tool string
	Args json.RawMessage
}

// API names the wire protocol a request used.
type API string

// The protocols the server speaks.
const (
	OpenAI    API = "openai"    // the OpenAI Responses API, POST /v1/responses
	Anthropic API = "anthropic" // the Anthropic Messages API, POST /v1/messages
)

// Request is one recorded HTTP request.
type Request struct {
	// API is the protocol of a model request; empty for anything else.
	API API
	// Method and Path are the HTTP method and URL path (no query).
	Method, Path string
	// Header is the request header as received, credentials included, so a
	// test can assert the key reached the model.
	Header http.Header
	// Body is the raw (decompressed) request body.
	Body []byte
	// Aux is true when the request did not take part in the script: a
	// probe, a token count, a model listing, or a model request without the
	// shell tool (title generation, quota checks).
	Aux bool
	// Conversation is the CLI's session id when it sent one.
	Conversation string
	// Turn is the index of the script turn this request was answered with
	// (polling a command codex still runs belongs to its Shell turn); -1 for
	// auxiliary requests and for closing a structured result.
	Turn int
	// Model is the model the request named.
	Model string
	// Prompt is the text of every instruction, system, developer and user
	// message in the request, in order, one per line: the skill text and the
	// params appear here.
	Prompt string
	// Tools lists the tool names the CLI offered.
	Tools []string
	// ToolOutputs lists the tool results in the conversation history, in
	// order; the last one answers the previous Shell turn (for a command
	// codex had to poll, the output is split over the poll results).
	ToolOutputs []string
	// Schema is the structured-output JSON Schema the CLI sent, if any.
	Schema json.RawMessage
}

// Server is a scripted model endpoint listening on 127.0.0.1. It is safe
// for concurrent use; each conversation plays the script from its first turn.
type Server struct {
	script []Turn
	ln     net.Listener
	srv    *http.Server
	url    string

	// log, when set (Listen), gets a line for every model request and script violation;
	// forget keeps requests from being recorded, and errors past maxErrs, for a server that
	// runs for hours.
	log    func(string)
	forget bool

	mu   sync.Mutex
	reqs []Request
	errs []error
}

// maxErrs bounds the script violations a forgetful server keeps.
const maxErrs = 100

// Start listens on 127.0.0.1 on a free port and serves the script. A
// malformed script (a turn with not exactly one field, a final turn that is
// not last) is reported by Err.
func Start(script ...Turn) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("modelfake: listen on 127.0.0.1: %v", err))
	}
	s := &Server{script: script, ln: ln, url: "http://" + ln.Addr().String()}
	s.checkScript()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed on Close
	return s
}

func (s *Server) checkScript() {
	if len(s.script) == 0 {
		s.fail(errors.New("modelfake: empty script"))
	}
	for i, t := range s.script {
		n := 0
		for _, set := range []bool{t.Shell != "", t.Text != "", t.JSON != nil, t.Tool != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			s.fail(fmt.Errorf("modelfake: script turn %d sets %d of Shell, Text, JSON, Tool; want exactly one", i, n))
		}
		if t.JSON != nil && !json.Valid(t.JSON) {
			s.fail(fmt.Errorf("modelfake: script turn %d: JSON is not valid JSON: %s", i, t.JSON))
		}
		if t.Args != nil && (t.Tool == "" || !json.Valid(t.Args)) {
			s.fail(fmt.Errorf("modelfake: script turn %d: Args needs a Tool and valid JSON", i))
		}
		if t.Shell == "" && t.Tool == "" && i != len(s.script)-1 {
			s.fail(fmt.Errorf("modelfake: script turn %d is final (Text or JSON) but is not the last turn", i))
		}
	}
}

// Close stops the server and closes open connections.
func (s *Server) Close() { _ = s.srv.Close() }

// URL is the server's root, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// OpenAIBaseURL is the base_url of a codex model provider
// (model_providers.<id>.base_url); codex appends /responses.
func (s *Server) OpenAIBaseURL() string { return s.url + "/v1" }

// AnthropicBaseURL is the value of ANTHROPIC_BASE_URL for claude; it appends
// /v1/messages.
func (s *Server) AnthropicBaseURL() string { return s.url }

// Requests returns a copy of every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Scripted returns the requests that took part in the script (not Aux).
func (s *Server) Scripted() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if !r.Aux {
			out = append(out, r)
		}
	}
	return out
}

// Err reports every script violation so far (an unexpected request shape,
// the script exhausted, a tool result missing), or nil.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

func (s *Server) fail(err error) {
	if s.log != nil {
		s.log(err.Error())
	}
	s.mu.Lock()
	if !s.forget || len(s.errs) < maxErrs {
		s.errs = append(s.errs, err)
	}
	s.mu.Unlock()
}

func (s *Server) record(r Request) {
	if s.log != nil {
		if line := logRequest(r); line != "" {
			s.log(line)
		}
	}
	if s.forget {
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// ServeHTTP routes a request; every request is recorded.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Aux: true, Turn: -1}
	if err != nil {
		s.record(rec)
		s.fail(fmt.Errorf("modelfake: %s %s: %v", r.Method, r.URL.Path, err))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Every reply is prepared, then the request recorded, then the reply
	// written: a CLI that exits as soon as it has read the answer finds its
	// request already in Requests.
	var reply func()
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		rec.API = OpenAI
		reply = s.serveResponses(w, r, &rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		rec.API = Anthropic
		reply = func() { writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1}) }
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		rec.API = Anthropic
		reply = s.serveMessages(w, r, &rec)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		// Both shapes at once: OpenAI lists "data", codex's model catalog
		// reads "models"; an empty catalog makes codex use its defaults.
		reply = func() {
			writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}, "has_more": false})
		}
	default:
		// Connectivity probes (claude's HEAD /api/hello) and anything else:
		// a plain 200 keeps a CLI from retrying.
		reply = func() { w.WriteHeader(http.StatusOK) }
	}
	s.record(rec)
	reply()
}

func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return raw, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return raw, fmt.Errorf("gzip body: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(zr, 64<<20+1))
		if err == nil && len(data) > 64<<20 {
			err = errors.New("gzip body larger than 64 MiB")
		}
		return data, err
	default:
		return raw, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
}

// step is what the script says to do for one model request.
type step struct {
	turn int  // script index, -1 when closing a structured result
	done bool // the structured result tool was called: say the final text
	t    Turn
}

// conversation is the protocol-neutral view of one model request's history.
type conversation struct {
	shellCalls  int    // scripted tool calls (the shell or a Tool turn's) in the history
	lastCall    string // name of the last tool call in the history
	lastCallID  string
	lastAnswerd bool // the last tool call has a result in the history
}

// next decides the script step from the history: the number of shell calls
// already made is the index of the turn to play, so a retried request gets
// the same answer and conversations need no server-side state.
func (s *Server) next(c conversation, structuredTool string) (step, error) {
	if c.lastCallID != "" && !c.lastAnswerd {
		return step{}, fmt.Errorf("tool result missing for call %s (%s)", c.lastCallID, c.lastCall)
	}
	if structuredTool != "" && c.lastCall == structuredTool {
		return step{turn: -1, done: true}, nil
	}
	if c.shellCalls >= len(s.script) {
		return step{}, fmt.Errorf("script exhausted: %d shell calls made, the script has %d turns", c.shellCalls, len(s.script))
	}
	return step{turn: c.shellCalls, t: s.script[c.shellCalls]}, nil
}

// offered finds the offered tool a Tool turn names: the same name, or a
// name ending in "__"+name.
func offered(tools []string, name string) (string, bool) {
	for _, t := range tools {
		if t == name || strings.HasSuffix(t, "__"+name) {
			return t, true
		}
	}
	return "", false
}

// scriptedTool reports whether a call in the history is a Tool turn's.
func (s *Server) scriptedTool(called string) bool {
	for _, t := range s.script {
		if t.Tool != "" && (called == t.Tool || strings.HasSuffix(called, "__"+t.Tool)) {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and flushes each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // only maps of plain values reach here
	}
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	if e.f != nil {
		e.f.Flush()
	}
}

// chunks splits s into pieces of about n bytes on rune boundaries, so deltas
// look like a real stream.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && !utf8RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
