package modelproxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/autonomyhq/autonomy/internal/bounded"
)

// maxEventLine bounds one server-sent-event data line the usage scanner
// keeps; a longer line (a huge response.completed) is skipped and the
// response's usage estimated from its size. With the transcript's head
// (DefaultMaxEntryBytes) and the relay buffer, a stream holds under 1 MiB.
const maxEventLine = 480 << 10

// capture keeps the head of a response for the transcript (bounded) and
// reads the usage from it as it streams by: from the data lines of a
// server-sent-event stream, or from the whole body of a JSON response.
type capture struct {
	limit     int64
	stream    bool
	head      bytes.Buffer
	truncated bool
	size      int64

	line     []byte // the current SSE line, while it fits maxEventLine
	overflow bool   // the current line outgrew maxEventLine
	found    bool
	u        Usage
}

func newCapture(limit int64, contentType string) *capture {
	return &capture{limit: limit, stream: strings.HasPrefix(contentType, "text/event-stream")}
}

// Write never fails.
func (c *capture) Write(b []byte) (int, error) {
	c.size += int64(len(b))
	if room := c.limit - int64(c.head.Len()); room > 0 {
		c.head.Write(b[:min(int64(len(b)), room)])
	}
	if int64(c.head.Len()) < c.size {
		c.truncated = true
	}
	if c.stream {
		c.scan(b)
	}
	return len(b), nil
}

// scan splits a stream into lines and reads usage from data lines.
func (c *capture) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !c.overflow {
			if len(c.line)+len(part) > maxEventLine {
				c.overflow, c.line = true, nil
			} else {
				c.line = append(c.line, part...)
			}
		}
		if i < 0 {
			return
		}
		if !c.overflow {
			c.dataLine(bytes.TrimSuffix(c.line, []byte("\r")))
		}
		c.line, c.overflow = c.line[:0], false
		b = b[i+1:]
	}
}

func (c *capture) dataLine(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(data, []byte(`"usage"`)) {
		return
	}
	c.merge(bytes.TrimSpace(data))
}

// usageEnvelope finds a usage object where either API puts one: top level
// (a JSON response, anthropic's message_delta, chat completions), in
// "response" (the Responses API's response.completed) or in "message"
// (anthropic's message_start).
type usageEnvelope struct {
	Usage    *rawUsage `json:"usage"`
	Response *struct {
		Usage *rawUsage `json:"usage"`
	} `json:"response"`
	Message *struct {
		Usage *rawUsage `json:"usage"`
	} `json:"message"`
}

type rawUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	PromptTokens             int64 `json:"prompt_tokens"`
	CompletionTokens         int64 `json:"completion_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	InputTokensDetails       *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// merge folds one usage report in. Reports of one response are cumulative
// (anthropic's message_start, then message_delta's running output count),
// so each figure is the largest seen.
func (c *capture) merge(data []byte) {
	var env usageEnvelope
	if json.Unmarshal(data, &env) != nil {
		return
	}
	for _, r := range []*rawUsage{env.Usage, responseUsage(env), messageUsage(env)} {
		if r == nil {
			continue
		}
		c.found = true
		in := r.InputTokens + r.PromptTokens + r.CacheCreationInputTokens + r.CacheReadInputTokens
		cached := r.CacheReadInputTokens
		if r.InputTokensDetails != nil {
			cached += r.InputTokensDetails.CachedTokens
		}
		c.u.InputTokens = max(c.u.InputTokens, in)
		c.u.CachedInputTokens = max(c.u.CachedInputTokens, cached)
		c.u.OutputTokens = max(c.u.OutputTokens, r.OutputTokens+r.CompletionTokens)
	}
}

func responseUsage(e usageEnvelope) *rawUsage {
	if e.Response == nil {
		return nil
	}
	return e.Response.Usage
}

func messageUsage(e usageEnvelope) *rawUsage {
	if e.Message == nil {
		return nil
	}
	return e.Message.Usage
}

// usage is what the response reported; reported is false when it reported nothing readable
// (a cut or malformed body): the ledger then charges the request's whole reservation.
func (c *capture) usage() (Usage, bool) {
	if !c.stream && !c.truncated {
		c.merge(c.head.Bytes())
	}
	return c.u, c.found
}

// request is what the proxy reads of a generation request's body.
type request struct {
	Model               string `json:"model"`
	MaxOutputTokens     int64  `json:"max_output_tokens"`
	MaxTokens           int64  `json:"max_tokens"`
	MaxCompletionTokens int64  `json:"max_completion_tokens"`
	Background          bool   `json:"background"`
	size                int64  // the body's decoded size
}

// inputEstimate is a generous count of the request's input tokens: one per three bytes.
func (r request) inputEstimate() int64 { return r.size/3 + 1 }

// maxOutput is the output the request's reservation holds: the most it allows, up to
// DefaultMaxOutput (CLIs ask for limits, 128,000 tokens, that one turn of an agent does not
// reach; a request that does is still charged what the API reports, after it).
func (r request) maxOutput() int64 {
	for _, n := range []int64{r.MaxOutputTokens, r.MaxTokens, r.MaxCompletionTokens} {
		if n > 0 {
			return min(n, DefaultMaxOutput)
		}
	}
	return DefaultMaxOutput
}

type requestError struct {
	status int
	msg    string
}

// inspect decodes a request body (gzip is undone, bounded by limit; other encodings are
// refused), checks a POST's (path, "" for none: reachRefusal, admitted by admit) and reads its
// fields. A body that is not JSON is passed on for the API to refuse.
func inspect(body []byte, encoding string, limit int64, path string, admit func(int64) (func(), bool)) (request, *requestError) {
	text := body
	switch encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return request{}, &requestError{http.StatusBadRequest, "the gzip request body does not decode: " + err.Error()}
		}
		if text, err = bounded.Read(zr, limit); bounded.IsTooLarge(err) {
			return request{}, &requestError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body decompresses to more than the proxy's limit of %d bytes", limit)}
		} else if err != nil {
			return request{}, &requestError{http.StatusBadRequest, "the gzip request body does not decode: " + err.Error()}
		}
	default:
		return request{}, &requestError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Encoding %q is not supported (send it plain or gzip)", encoding)}
	}
	if why := reachRefusal(path, text, admit); why != "" {
		return request{}, &requestError{http.StatusBadRequest, "refused: " + why}
	}
	var r request
	_ = json.Unmarshal(text, &r)
	r.size = int64(len(text))
	return r, nil
}

// decoded returns a request body as text for the transcript: gzip is undone (bounded by
// limit), anything else is returned as is.
func decoded(body []byte, encoding string, limit int64) []byte {
	if encoding != "gzip" {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit))
	if err != nil {
		return body
	}
	return out
}
