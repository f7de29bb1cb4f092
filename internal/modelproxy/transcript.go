package modelproxy

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Entry is one line of the transcript: a forwarded request and what came back.
type Entry struct {
	Seq        int64           `json:"seq"`
	Start      time.Time       `json:"start"`
	DurationMS int64           `json:"duration_ms"`
	API        API             `json:"api"`
	Method     string          `json:"method"`
	Path       string          `json:"path"`
	Model      string          `json:"model,omitempty"`
	Status     int             `json:"status,omitempty"`
	Usage      Usage           `json:"usage"`
	Request    json.RawMessage `json:"request,omitempty"`
	// RequestText holds a request body that is not JSON (or was cut).
	RequestText string `json:"request_text,omitempty"`
	Response    string `json:"response,omitempty"`
	// Truncated names what was cut to the entry limit: "request", "response".
	Truncated []string `json:"truncated,omitempty"`
	// Omitted is set once the transcript reached its total limit: the
	// entry keeps its figures but not its bodies.
	Omitted bool   `json:"omitted,omitempty"`
	Error   string `json:"error,omitempty"`
}

// transcript writes entries as JSON lines, bounded in total.
type transcript struct {
	w      io.Writer
	entry  int64
	total  int64
	redact func(string) string

	mu      sync.Mutex
	seq     int64
	written int64
}

func newTranscript(w io.Writer, entry, total int64, redact func(string) string) *transcript {
	return &transcript{w: w, entry: entry, total: total, redact: redact}
}

func (t *transcript) write(ex *exchange) {
	if t.w == nil {
		return
	}
	e := Entry{Start: ex.start.UTC(), DurationMS: time.Since(ex.start).Milliseconds(), API: ex.api, Method: ex.method,
		Path: ex.path, Model: ex.model, Status: ex.status, Usage: ex.usage, Error: ex.err}
	t.bodies(&e, ex)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	e.Seq = t.seq
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	if t.written+int64(len(line)) > t.total {
		e.Request, e.RequestText, e.Response, e.Truncated, e.Omitted = nil, "", "", nil, true
		if line, err = json.Marshal(e); err != nil {
			return
		}
	}
	n, _ := t.w.Write(append(line, '\n'))
	t.written += int64(n)
}

// bodies fills the request and response of an entry, redacted and cut to
// the entry limit.
func (t *transcript) bodies(e *Entry, ex *exchange) {
	req := decoded(ex.request, ex.encoding, t.entry+1)
	text, cut := clip(t.redact(string(req)), t.entry)
	if cut {
		e.Truncated = append(e.Truncated, "request")
	}
	if !cut && json.Valid([]byte(text)) {
		e.Request = json.RawMessage(text)
	} else {
		e.RequestText = text
	}
	if ex.response != nil {
		resp, cut := clip(t.redact(ex.response.head.String()), t.entry)
		e.Response = resp
		if cut || ex.response.truncated {
			e.Truncated = append(e.Truncated, "response")
		}
	}
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int64) (string, bool) {
	if int64(len(s)) <= n {
		return s, false
	}
	i := int(n)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// keyShaped matches strings shaped like a credential, so one an upstream echoes in part
// ("sk-abc…xyz"), or one the agent printed into the conversation (its env, a config file),
// is redacted too: API keys (sk-, rk-, pk-), GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_,
// github_pat_), AWS access key ids and bearer tokens.
var keyShaped = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:(?:sk|rk|pk)-[A-Za-z0-9_\-*.]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|A[KS]IA[0-9A-Z]{16})|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{12,}`)
})

// redact removes every configured credential, and anything shaped like an
// API key, from s.
func (p *Proxy) redact(s string) string {
	for _, k := range p.secrets {
		s = strings.ReplaceAll(s, k, "[REDACTED]")
	}
	return keyShaped().ReplaceAllString(s, "[REDACTED]")
}

// apiError answers in the error shape of the API the agent speaks, which
// the pinned CLIs print.
func apiError(w http.ResponseWriter, api API, code int, msg string) {
	var body any
	if api == Anthropic {
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	} else {
		body = map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg, "code": "autonomy_proxy"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func plainError(w http.ResponseWriter, code int, msg string) {
	http.Error(w, msg, code)
}
