package modelproxy_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
)

const (
	openAIKey    = "sk-realOPENAIkey0123456789abcdef"
	anthropicKey = "sk-ant-realANTHROPICkey0123456789"
	placeholder  = "autonomy-proxy-test-placeholder"
)

// harness is a proxy in front of an upstream, served on a loopback port.
type harness struct {
	proxy *modelproxy.Proxy
	url   string
	log   *lockedWriter
}

func start(t testing.TB, upstream string, mutate func(*modelproxy.Config)) *harness {
	t.Helper()
	log := &lockedWriter{w: &bytes.Buffer{}}
	cfg := modelproxy.Config{OpenAIUpstream: upstream, AnthropicUpstream: upstream, OpenAIKey: openAIKey,
		AnthropicKey: anthropicKey, Placeholder: placeholder, Transcript: log}
	if mutate != nil {
		mutate(&cfg)
	}
	p, err := modelproxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	url, done, err := modelproxy.Listen(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &harness{proxy: p, url: url, log: log}
}

// lockedWriter lets a test read the transcript while the proxy writes it.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (h *harness) entries(t *testing.T) []modelproxy.Entry {
	t.Helper()
	var out []modelproxy.Entry
	sc := bufio.NewScanner(strings.NewReader(h.log.String()))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e modelproxy.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("transcript line is not an Entry: %v\n%s", err, sc.Bytes())
		}
		out = append(out, e)
	}
	return out
}

func post(t *testing.T, url, key, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const responsesBody = `{"model":"gpt-5.5","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"hello"}]}]}`

func TestForwardsResponsesWithTheRealKeyAndCountsUsage(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	h := start(t, fake.URL(), nil)
	resp, body := post(t, h.url+"/openai/v1/responses", placeholder, responsesBody)
	if resp.StatusCode != 200 || !strings.Contains(body, "event: response.completed") {
		t.Fatalf("status %d, body:\n%s", resp.StatusCode, body)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/responses" {
		t.Fatalf("upstream saw %+v", reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+openAIKey {
		t.Errorf("upstream Authorization = %q, want the real key", got)
	}
	want := modelproxy.Usage{Requests: 1, InputTokens: 100, OutputTokens: 10}
	got := h.proxy.Usage()
	got.CostUSD = 0
	if got != want {
		t.Errorf("usage = %+v, want %+v", got, want)
	}
	es := h.entries(t)
	if len(es) != 1 || es[0].Model != "gpt-5.5" || es[0].Status != 200 || es[0].Usage.OutputTokens != 10 ||
		!strings.Contains(es[0].Response, "response.completed") || len(es[0].Request) == 0 {
		t.Fatalf("transcript = %+v", es)
	}
	if strings.Contains(h.log.String(), openAIKey) || strings.Contains(h.log.String(), placeholder) {
		t.Errorf("the transcript holds a key:\n%s", h.log.String())
	}
}

func TestForwardsMessagesWithTheRealKey(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	h := start(t, fake.URL(), nil)
	body := `{"model":"claude-sonnet-4-5","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hello"}]}`
	resp, out := post(t, h.url+"/anthropic/v1/messages?beta=true", placeholder, body, "Authorization", "", "X-Api-Key", placeholder)
	if resp.StatusCode != 200 || !strings.Contains(out, "message_stop") {
		t.Fatalf("status %d, body:\n%s", resp.StatusCode, out)
	}
	r := fake.Requests()[0]
	if r.Header.Get("X-Api-Key") != anthropicKey || r.Header.Get("Authorization") != "" {
		t.Errorf("upstream headers: x-api-key=%q authorization=%q", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
	}
	if u := h.proxy.Usage(); u.Requests != 1 || u.InputTokens != 100 || u.OutputTokens != 10 {
		t.Errorf("usage = %+v, want 1 request, 100 in, 10 out (message_start then message_delta)", u)
	}
	// The connectivity probe is answered by the proxy, never forwarded.
	req, _ := http.NewRequest(http.MethodHead, h.url+"/anthropic/api/hello", nil)
	req.Header.Set("X-Api-Key", placeholder)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /api/hello: %v %v", resp, err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
}

func TestRefusesWhatItMustNotForward(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	h := start(t, up.URL, nil)
	cases := []struct {
		name, method, path, key string
		header                  []string
		want                    int
	}{
		{"no key", "POST", "/openai/v1/responses", "", nil, 401},
		{"the real key is not the proxy's key", "POST", "/openai/v1/responses", openAIKey, nil, 401},
		{"a path outside the allowlist", "POST", "/openai/v1/files", placeholder, nil, 404},
		{"an admin path", "GET", "/openai/v1/organization/api_keys", placeholder, nil, 404},
		{"no API prefix", "POST", "/v1/responses", placeholder, nil, 404},
		{"a method the path does not take", "DELETE", "/openai/v1/responses", placeholder, nil, 405},
		{"a websocket upgrade", "GET", "/openai/v1/responses", placeholder, []string{"Connection", "Upgrade", "Upgrade", "websocket"}, 426},
		{"dot segments", "POST", "/openai/v1/responses/../files", placeholder, nil, 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, h.url+c.path, strings.NewReader("{}"))
			req.URL.Opaque = c.path // keep dot segments as sent
			req.Header.Set("Authorization", "Bearer "+c.key)
			for i := 0; i+1 < len(c.header); i += 2 {
				req.Header.Set(c.header[i], c.header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("status %d, want %d", resp.StatusCode, c.want)
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("upstream saw %d requests, want none", hits.Load())
	}
}

func TestBudgetOfTwoRequestsRefusesTheThird(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	h := start(t, fake.URL(), func(c *modelproxy.Config) { c.Budget = modelproxy.Budget{Requests: 2} })
	for i := 0; i < 2; i++ {
		if resp, body := post(t, h.url+"/openai/v1/responses", placeholder, responsesBody); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := post(t, h.url+"/openai/v1/responses", placeholder, responsesBody)
	if resp.StatusCode != 400 || !strings.Contains(body, "budget exhausted: 2 of 2 requests used") {
		t.Fatalf("third request: %d %s", resp.StatusCode, body)
	}
	if got := h.proxy.Exhausted(); got != "budget exhausted: 2 of 2 requests used" {
		t.Errorf("Exhausted() = %q", got)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("upstream saw %d requests, want 2", n)
	}
}

// bounded is a Responses request that allows at most 20 output tokens: its reservation is its
// input estimate (a token per three bytes) plus 20.
const bounded = `{"model":"gpt-5.5","stream":true,"max_output_tokens":20,"input":[{"role":"user","content":[{"type":"input_text","text":"hello"}]}]}`

func TestTokenAndCostBudgets(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	// Each response uses 100 input and 10 output tokens.
	h := start(t, fake.URL(), func(c *modelproxy.Config) { c.Budget = modelproxy.Budget{Tokens: 200} })
	for i := 0; i < 2; i++ {
		if resp, body := post(t, h.url+"/openai/v1/responses", placeholder, bounded); resp.StatusCode != 200 {
			t.Fatalf("request %d refused under the token budget: %s", i, body)
		}
	}
	if resp, body := post(t, h.url+"/openai/v1/responses", placeholder, bounded); resp.StatusCode != 400 ||
		!strings.Contains(body, "budget exhausted: 220 tokens used, the budget is 200") {
		t.Fatalf("after 220 tokens: %d %s", resp.StatusCode, body)
	}
	// gpt-5.5 at $1/M input and $10/M output: 100 in + 10 out = $0.0002 a request; each
	// reserves about $0.00025 (its input estimate and 20 output tokens).
	prices := map[string]modelproxy.Price{"gpt-5": {Input: 1, Output: 10}, "*": {Input: 1000, Output: 1000}}
	c := start(t, fake.URL(), func(c *modelproxy.Config) {
		c.Budget = modelproxy.Budget{CostUSD: 0.0005}
		c.Prices = prices
	})
	for i := 0; i < 2; i++ {
		if resp, _ := post(t, c.url+"/openai/v1/responses", placeholder, bounded); resp.StatusCode != 200 {
			t.Fatalf("request %d refused under the cost budget", i)
		}
	}
	if u := c.proxy.Usage(); u.CostUSD < 0.00039 || u.CostUSD > 0.00041 {
		t.Errorf("cost = %v, want 0.0004 (gpt-5.5 priced by its family gpt-5)", u.CostUSD)
	}
	if resp, body := post(t, c.url+"/openai/v1/responses", placeholder, bounded); resp.StatusCode != 200 {
		t.Fatalf("a lone request while $0.0001 of the budget is left: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, c.url+"/openai/v1/responses", placeholder, bounded); resp.StatusCode != 400 ||
		!strings.Contains(body, "budget exhausted: $0.0006 spent") {
		t.Fatalf("over the cost budget: %d %s", resp.StatusCode, body)
	}
}

// TestConcurrentRequestsCannotOverrunTheBudget: requests in flight hold their worst case against
// the budget, so forty at once spend no more than it plus one request (the one let through alone
// when the rest of the budget was smaller than its worst case), however the answers are timed.
func TestConcurrentRequestsCannotOverrunTheBudget(t *testing.T) {
	var seen atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		body, _ := io.ReadAll(r.Body)
		time.Sleep(50 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		// An honest API: input at most a token per byte sent, output at most the limit asked.
		fmt.Fprintf(w, `{"usage":{"input_tokens":%d,"output_tokens":20}}`, len(body)/4)
	}))
	defer up.Close()
	prices := map[string]modelproxy.Price{"*": {Input: 10, Output: 10}}
	const budget = 0.01
	h := start(t, up.URL, func(c *modelproxy.Config) { c.Budget = modelproxy.Budget{CostUSD: budget}; c.Prices = prices })
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, h.url+"/openai/v1/responses", strings.NewReader(`{"model":"x","max_output_tokens":20,"input":"`+strings.Repeat("w", 400)+`"}`))
			req.Header.Set("Authorization", "Bearer "+placeholder)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	const oneRequest = 0.002 // at most 170 tokens reserved at $10/M, 132 used
	if u := h.proxy.Usage(); u.CostUSD > budget+oneRequest || seen.Load() == 0 || seen.Load() >= 40 {
		t.Errorf("40 concurrent requests under a $%v budget: the upstream saw %d, the run spent $%.4f", budget, seen.Load(), u.CostUSD)
	}
}

// TestAResponseWithoutUsageCostsItsReservation: an agent that hangs up before the usage arrives
// (or a stream that breaks) is charged the request's worst case, its input included.
func TestAResponseWithoutUsageCostsItsReservation(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the usage would come much later
	}))
	defer up.Close()
	h := start(t, up.URL, func(c *modelproxy.Config) { c.Prices = map[string]modelproxy.Price{"*": {Input: 1, Output: 1}} })
	big := `{"model":"x","stream":true,"max_output_tokens":10,"input":"` + strings.Repeat("word ", 60000) + `"}`
	req, _ := http.NewRequest(http.MethodPost, h.url+"/openai/v1/responses", strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer "+placeholder)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 64)) // the first event, then hang up
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for h.proxy.Usage().Requests == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if u := h.proxy.Usage(); !u.Estimated || u.InputTokens < 300000/4 || u.OutputTokens != 10 {
		t.Errorf("usage %+v, want the reservation: the input estimate of a 300 KB body and the 10 output tokens allowed", u)
	}
}

func TestRefusesWhatTheBudgetCannotBound(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	h := start(t, up.URL, nil)
	if resp, body := post(t, h.url+"/openai/v1/responses", placeholder, `{"model":"x","background":true}`); resp.StatusCode != 400 ||
		!strings.Contains(body, "background responses are not allowed") {
		t.Errorf("a background response: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, h.url+"/openai/v1/responses", placeholder, `{}`, "Content-Encoding", "br"); resp.StatusCode != 415 {
		t.Errorf("a brotli body: %d %s", resp.StatusCode, body)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(`{"model":"x","input":"`))
	zw.Write(bytes.Repeat([]byte("a"), 2<<20))
	zw.Close()
	small := start(t, up.URL, func(c *modelproxy.Config) { c.MaxBody = 1 << 20 })
	if resp, body := post(t, small.url+"/openai/v1/responses", placeholder, zb.String(), "Content-Encoding", "gzip"); resp.StatusCode != 413 {
		t.Errorf("a gzip body that inflates past MaxBody: %d %.200s", resp.StatusCode, body)
	}
	if hits.Load() != 0 {
		t.Errorf("the upstream saw %d requests, want none", hits.Load())
	}
}

func TestBillingHeadersAreNotForwarded(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	h := start(t, fake.URL(), nil)
	post(t, h.url+"/openai/v1/responses", placeholder, bounded, "OpenAI-Organization", "org-other", "OpenAI-Project", "proj-other")
	r := fake.Requests()[0]
	if r.Header.Get("OpenAI-Organization") != "" || r.Header.Get("OpenAI-Project") != "" {
		t.Errorf("the agent chose the billed organization/project: %v", r.Header)
	}
}

func TestUpstreamErrorsNeverCarryTheKey(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+openAIKey+` (or sk-realOPE***********cdef)"}}`)
	}))
	defer up.Close()
	h := start(t, up.URL, nil)
	resp, body := post(t, h.url+"/openai/v1/responses", placeholder, responsesBody)
	if resp.StatusCode != 401 || !strings.Contains(body, "Incorrect API key provided: [REDACTED]") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for name, s := range map[string]string{"the agent's answer": body, "the transcript": h.log.String()} {
		if strings.Contains(s, openAIKey) || strings.Contains(s, "sk-realOPE") {
			t.Errorf("%s holds the key:\n%s", name, s)
		}
	}
}

func TestMalformedUpstreamResponses(t *testing.T) {
	cases := map[string]http.HandlerFunc{
		"a stream cut mid-event": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.cre")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		},
		"JSON that is not JSON": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"usage": {"input_tokens": "many"`)
		},
		"a usage line that is garbage": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"usage\": [1,2,\n\ndata: \"usage\"\n\n")
		},
		"a connection closed before headers": func(w http.ResponseWriter, r *http.Request) {
			panic(http.ErrAbortHandler)
		},
	}
	for name, handler := range cases {
		t.Run(name, func(t *testing.T) {
			up := httptest.NewServer(handler)
			defer up.Close()
			h := start(t, up.URL, nil)
			req, _ := http.NewRequest(http.MethodPost, h.url+"/openai/v1/responses", strings.NewReader(responsesBody))
			req.Header.Set("Authorization", "Bearer "+placeholder)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			u := h.proxy.Usage()
			noResponse := name == "a connection closed before headers"
			if u.Requests != 1 || !u.Estimated || u.OutputTokens != modelproxy.DefaultMaxOutput {
				t.Errorf("usage = %+v, want one request charged its reservation", u)
			}
			if noResponse && (err != nil || resp.StatusCode != http.StatusBadGateway) {
				t.Errorf("agent got %v %v, want 502", resp, err)
			}
			es := h.entries(t)
			if len(es) != 1 {
				t.Fatalf("transcript has %d entries, want 1", len(es))
			}
			if strings.Contains(h.log.String(), openAIKey) {
				t.Errorf("transcript holds the key")
			}
		})
	}
}

func TestClientDisconnectMidStreamCancelsUpstream(t *testing.T) {
	upstreamDone := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(upstreamDone)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.created\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a stream that never ends unless cancelled
	}))
	defer up.Close()
	h := start(t, up.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/openai/v1/responses", strings.NewReader(responsesBody))
	req.Header.Set("Authorization", "Bearer "+placeholder)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "event: response.created\n" {
		t.Fatalf("first line %q", line)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-upstreamDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream stream was not cancelled when the agent went away")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(h.entries(t)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if es := h.entries(t); len(es) != 1 || es[0].Error == "" {
		t.Errorf("transcript = %+v, want one entry with the error", es)
	}
}

func TestBodiesAreBounded(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	big := `{"model":"gpt-5.5","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"` +
		strings.Repeat("x", 10<<20) + ` ` + openAIKey + `"}]}]}`
	h := start(t, fake.URL(), nil)
	if resp, body := post(t, h.url+"/openai/v1/responses", placeholder, big); resp.StatusCode != 200 {
		t.Fatalf("a 10 MB body under the 32 MiB limit: %d %s", resp.StatusCode, body)
	}
	es := h.entries(t)
	if len(es) != 1 || len(es[0].RequestText) > modelproxy.DefaultMaxEntryBytes || len(es[0].Truncated) == 0 {
		t.Fatalf("entry request %d bytes, truncated %v", len(es[0].RequestText), es[0].Truncated)
	}
	small := start(t, fake.URL(), func(c *modelproxy.Config) { c.MaxBody = 1 << 20 })
	resp, body := post(t, small.url+"/openai/v1/responses", placeholder, big)
	if resp.StatusCode != 413 || strings.Contains(body, openAIKey) {
		t.Fatalf("over MaxBody: %d %.200s", resp.StatusCode, body)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
}

func TestTranscriptTotalIsBounded(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "hi"})
	defer fake.Close()
	h := start(t, fake.URL(), func(c *modelproxy.Config) { c.MaxTranscript = 6000 })
	for i := 0; i < 5; i++ {
		post(t, h.url+"/openai/v1/responses", placeholder, responsesBody)
	}
	es := h.entries(t)
	if len(es) != 5 || !es[4].Omitted || es[0].Omitted || es[4].Usage.OutputTokens != 10 {
		t.Fatalf("entries: %d, omitted first=%v last=%v", len(es), es[0].Omitted, es[len(es)-1].Omitted)
	}
	if len(h.log.String()) > 6000+2000 {
		t.Errorf("transcript is %d bytes, want about 6000", len(h.log.String()))
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]modelproxy.Config{
		"no placeholder":          {OpenAIKey: openAIKey},
		"no credential":           {Placeholder: placeholder},
		"placeholder is the key":  {OpenAIKey: openAIKey, Placeholder: openAIKey},
		"upstream not http":       {OpenAIKey: openAIKey, Placeholder: placeholder, OpenAIUpstream: "file:///etc"},
		"upstream with a query":   {OpenAIKey: openAIKey, Placeholder: placeholder, OpenAIUpstream: "https://x?y=1"},
		"upstream without a host": {OpenAIKey: openAIKey, Placeholder: placeholder, OpenAIUpstream: "https:///v1"},
	} {
		if _, err := modelproxy.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

// TestUpstreamFailureSaysWhy: the last generation request's upstream failure is kept, for the
// runner to name when the agent gives up: an upstream that cannot be reached (its origin and the
// cause), one that answers an error (its status and message, without the key); an answered
// request clears it.
func TestUpstreamFailureSaysWhy(t *testing.T) {
	var status atomic.Int32
	status.Store(401)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if s := int(status.Load()); s != 200 {
			w.WriteHeader(s)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+openAIKey+`.\nSee the docs."}}`)
			return
		}
		io.WriteString(w, `{"id":"r","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer up.Close()
	h := start(t, up.URL, nil)
	if f := h.proxy.UpstreamFailure(); f != nil {
		t.Fatalf("before any request: %v", f)
	}
	post(t, h.url+"/openai/v1/responses", placeholder, responsesBody)
	f := h.proxy.UpstreamFailure()
	if want := up.URL + " answered 401 Unauthorized: Incorrect API key provided: [REDACTED]. See the docs."; f == nil || f.API != modelproxy.OpenAI || f.String() != want {
		t.Errorf("after a 401: %+v, want %q", f, want)
	}
	status.Store(200)
	post(t, h.url+"/openai/v1/responses", placeholder, responsesBody)
	if f := h.proxy.UpstreamFailure(); f != nil {
		t.Errorf("after an answer: %v", f)
	}

	// An upstream no one listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String()
	l.Close()
	h = start(t, gone, nil)
	post(t, h.url+"/anthropic/v1/messages", placeholder, `{"model":"claude-x","max_tokens":10,"messages":[]}`)
	f = h.proxy.UpstreamFailure()
	if f == nil || f.API != modelproxy.Anthropic || !strings.HasPrefix(f.String(), gone+" failed: dial tcp "+l.Addr().String()+": connect: connection refused") {
		t.Errorf("an upstream that is gone: %+v", f)
	}
}

// A request asking the provider to reach the network for the session (its own tools, content by
// URL) is refused in the API's own error shape, never forwarded, and kept in the transcript,
// gzipped or not.
func TestRefusesWhatTheProviderWouldFetch(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	h := start(t, up.URL, nil)
	mcp := `{"model":"gpt-5.5","input":"hi","tools":[{"type":"mcp","server_label":"x","server_url":"https://evil.example/mcp"}]}`
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(mcp))
	zw.Close()
	for _, c := range []struct {
		name, path, body string
		header           []string
		shape            string
	}{
		{"a remote MCP server", "/openai/v1/responses", mcp, nil, `"error":{`},
		{"the same, gzipped", "/openai/v1/responses", zipped.String(), []string{"Content-Encoding", "gzip"}, `"error":{`},
		{"claude's web fetch", "/anthropic/v1/messages", `{"model":"m","max_tokens":1,"messages":[],"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`, nil, `"type":"error"`},
	} {
		resp, body := post(t, h.url+c.path, placeholder, c.body, c.header...)
		if resp.StatusCode != 400 || !strings.Contains(body, "modelproxy: refused: ") || !strings.Contains(body, "past its sandbox") || !strings.Contains(body, c.shape) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("upstream saw %d requests, want none", hits.Load())
	}
	es := h.entries(t)
	if len(es) != 3 || es[0].Status != 400 || !strings.Contains(es[0].Error, `the provider's own tool "mcp"`) || !strings.Contains(string(es[0].Request), "evil.example") {
		t.Fatalf("transcript: %+v", es)
	}
	if u := h.proxy.Usage(); u.Requests != 0 {
		t.Errorf("usage %+v, want nothing spent", u)
	}
}
