package modelproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/autonomyhq/autonomy/internal/bounded"
)

// API names the wire protocol of a route.
type API string

// The protocols the proxy forwards.
const (
	OpenAI    API = "openai"
	Anthropic API = "anthropic"
)

// Defaults for Config's zero values.
const (
	DefaultMaxBody       = 32 << 20  // a request body; codex's long conversations reach a few MiB
	DefaultMaxEntryBytes = 512 << 10 // a request or a response in one transcript entry
	DefaultMaxTranscript = 64 << 20  // the whole transcript
	maxErrorBody         = 1 << 20   // an upstream error body, redacted before it reaches the agent
	DefaultMaxConcurrent = 4         // generation requests in flight
	// DefaultMaxOutput is the output a request is assumed to allow when it names no limit
	// (max_output_tokens, max_tokens, max_completion_tokens): what its reservation holds.
	DefaultMaxOutput = 32000
)

// Config configures a Proxy. Upstream origins default to the public APIs.
type Config struct {
	// OpenAIUpstream and AnthropicUpstream are the upstream origins (scheme,
	// host and an optional path prefix): "https://api.openai.com" and
	// "https://api.anthropic.com" when empty.
	OpenAIUpstream, AnthropicUpstream string
	// OpenAIKey and AnthropicKey are the real credentials. A route whose key
	// is empty is refused with 503, naming the missing credential.
	OpenAIKey, AnthropicKey string
	// Placeholder is the key the agent holds; requests without it are
	// refused. NewPlaceholder makes one.
	Placeholder string
	// Budget bounds the run; its zero value is unlimited.
	Budget Budget
	// Prices maps a model name to its price; "*" is the fallback. Nil means
	// DefaultPrices.
	Prices map[string]Price
	// Transcript receives one JSON line per forwarded request; nil keeps none.
	Transcript io.Writer
	// MaxBody, MaxEntryBytes and MaxTranscript bound a request body (also
	// once decompressed), one entry's request and response, and the whole
	// transcript.
	MaxBody, MaxEntryBytes, MaxTranscript int64
	// MaxConcurrent bounds the generation requests in flight; more wait.
	MaxConcurrent int
	// Client forwards requests; nil uses a client with no overall timeout
	// (streams run for minutes) and a 2-minute response-header timeout.
	Client *http.Client
}

// Proxy forwards an agent's model requests; it is an http.Handler and safe
// for concurrent use.
type Proxy struct {
	cfg   Config
	slots chan struct{} // one per generation request in flight (Config.MaxConcurrent)
	// checking is what the bodies being checked may take, decoded, together (reachRefusal): a
	// body near the bound at a time, and small ones beside it.
	checking *budget
	upstream map[API]*url.URL
	key      map[API]string
	secrets  []string
	client   *http.Client
	ledger   *ledger
	tr       *transcript

	mu sync.Mutex
	// failed is the upstream failure of the last generation request, nil once one succeeded.
	failed *Failure
}

// Failure is an upstream failure of a generation request: the API's origin could not be reached,
// or it answered an error. Message holds no credential.
type Failure struct {
	API     API
	Origin  string // e.g. https://api.openai.com
	Message string // "dial tcp: lookup api.openai.com: no such host", "answered 401: Incorrect API key …"
}

func (f Failure) String() string { return f.Origin + " " + f.Message }

// UpstreamFailure is the upstream failure of the last generation request, or nil when none was
// made or the last one was answered: why an agent that gave up on its model failed.
func (p *Proxy) UpstreamFailure() *Failure {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// note records the outcome of a generation request to api's upstream: f nil when it was answered.
func (p *Proxy) note(api API, f *Failure) {
	if f != nil {
		u := *p.upstream[api]
		u.User = nil
		f.API, f.Origin = api, u.String()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed = f
}

// maxFailure bounds the error message a Failure quotes from an upstream's answer.
const maxFailure = 200

// answered is the Failure of an upstream's error answer: its status and the message of its
// JSON error body ({"error": {"message": …}}, as both APIs write it), clipped.
func answered(status int, body []byte) *Failure {
	msg := fmt.Sprintf("answered %d %s", status, http.StatusText(status))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && strings.TrimSpace(e.Error.Message) != "" {
		m := strings.Join(strings.Fields(e.Error.Message), " ")
		if len(m) > maxFailure {
			m = strings.ToValidUTF8(m[:maxFailure], "") + "…"
		}
		msg += ": " + m
	}
	return &Failure{Message: msg}
}

// NewPlaceholder returns a random placeholder key for one session.
func NewPlaceholder() string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "autonomy-proxy-" + hex.EncodeToString(b[:])
}

// New checks cfg and returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Placeholder == "" {
		return nil, errors.New("modelproxy: no placeholder key: the agent must authenticate to the proxy (use NewPlaceholder)")
	}
	if cfg.OpenAIKey == "" && cfg.AnthropicKey == "" {
		return nil, errors.New("modelproxy: no credential: set the OpenAI or the Anthropic key")
	}
	if cfg.Placeholder == cfg.OpenAIKey || cfg.Placeholder == cfg.AnthropicKey {
		return nil, errors.New("modelproxy: the placeholder key equals a real credential")
	}
	setDefaults(&cfg)
	p := &Proxy{cfg: cfg, upstream: map[API]*url.URL{}, key: map[API]string{OpenAI: cfg.OpenAIKey, Anthropic: cfg.AnthropicKey},
		client: cfg.Client, ledger: newLedger(cfg.Budget, cfg.Prices)}
	for api, raw := range map[API]string{OpenAI: cfg.OpenAIUpstream, Anthropic: cfg.AnthropicUpstream} {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return nil, fmt.Errorf("modelproxy: %s upstream %q is not an http(s) origin (want e.g. https://api.openai.com)", api, raw)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		p.upstream[api] = u
	}
	for _, k := range []string{cfg.OpenAIKey, cfg.AnthropicKey} {
		if k != "" {
			p.secrets = append(p.secrets, k)
		}
	}
	p.tr = newTranscript(cfg.Transcript, cfg.MaxEntryBytes, cfg.MaxTranscript, p.redact)
	p.slots = make(chan struct{}, cfg.MaxConcurrent)
	p.checking = newBudget(maxDecoded + 64<<20)
	return p, nil
}

func setDefaults(cfg *Config) {
	if cfg.OpenAIUpstream == "" {
		cfg.OpenAIUpstream = "https://api.openai.com"
	}
	if cfg.AnthropicUpstream == "" {
		cfg.AnthropicUpstream = "https://api.anthropic.com"
	}
	if cfg.Prices == nil {
		cfg.Prices = DefaultPrices
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxEntryBytes <= 0 {
		cfg.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if cfg.MaxTranscript <= 0 {
		cfg.MaxTranscript = DefaultMaxTranscript
	}
	if cfg.Client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = 2 * time.Minute
		tr.Proxy = nil // the proxy is the egress: never chain through the environment's proxy settings
		cfg.Client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect would carry the credential elsewhere
		}}
	}
}

// Usage returns what the run has used so far.
func (p *Proxy) Usage() Usage { return p.ledger.total() }

// Exhausted returns the reason the budget refused a request ("budget
// exhausted: …"), or "" when none was refused.
func (p *Proxy) Exhausted() string { return p.ledger.refusedReason() }

// route is one allowlisted path.
type route struct {
	api     API
	methods string // space-separated
	model   bool   // a generation request: counted against the budget
	local   bool   // answered by the proxy itself
}

var routes = map[string]route{
	"/openai/v1/responses":                {api: OpenAI, methods: "POST", model: true},
	"/openai/v1/chat/completions":         {api: OpenAI, methods: "POST", model: true},
	"/openai/v1/models":                   {api: OpenAI, methods: "GET"},
	"/anthropic/v1/messages":              {api: Anthropic, methods: "POST", model: true},
	"/anthropic/v1/messages/count_tokens": {api: Anthropic, methods: "POST"},
	"/anthropic/v1/models":                {api: Anthropic, methods: "GET"},
	"/anthropic/api/hello":                {api: Anthropic, methods: "HEAD GET", local: true},
}

// ServeHTTP checks, forwards and records one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	rt, ok := routes[path]
	switch {
	case !ok:
		plainError(w, http.StatusNotFound, "modelproxy: "+path+" is not a model API path the proxy forwards")
		return
	case r.Header.Get("Upgrade") != "":
		plainError(w, http.StatusUpgradeRequired, "modelproxy: WebSocket is not supported; use HTTP streaming")
		return
	case !strings.Contains(" "+rt.methods+" ", " "+r.Method+" "):
		w.Header().Set("Allow", strings.ReplaceAll(rt.methods, " ", ", "))
		apiError(w, rt.api, http.StatusMethodNotAllowed, "modelproxy: "+r.Method+" "+path+" is not allowed")
		return
	case !p.authorized(r):
		apiError(w, rt.api, http.StatusUnauthorized, "modelproxy: the request does not carry this session's proxy key")
		return
	case rt.local:
		w.WriteHeader(http.StatusOK)
		return
	case p.key[rt.api] == "":
		apiError(w, rt.api, http.StatusServiceUnavailable, "modelproxy: no "+string(rt.api)+" credential is configured for this run")
		return
	}
	p.forward(w, r, path, rt)
}

// authorized reports whether r carries the placeholder as a bearer token or
// an x-api-key, compared in constant time.
func (p *Proxy) authorized(r *http.Request) bool {
	want := []byte(p.cfg.Placeholder)
	for _, got := range []string{strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("X-Api-Key")} {
		if subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			return true
		}
	}
	return false
}

// exchange is what one forwarded request leaves for the ledger and the transcript.
type exchange struct {
	api          API
	method, path string
	model        string
	status       int
	start        time.Time
	request      []byte
	encoding     string
	response     *capture
	usage        Usage
	reported     bool // the response reported its usage, read whole
	err          string
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, path string, rt route) {
	ex := &exchange{api: rt.api, method: r.Method, path: path, start: time.Now(), encoding: r.Header.Get("Content-Encoding")}
	body, err := bounded.Read(r.Body, p.cfg.MaxBody)
	if err != nil {
		apiError(w, rt.api, http.StatusRequestEntityTooLarge, fmt.Sprintf("modelproxy: request body: %v (the proxy's limit)", err))
		return
	}
	ex.request = body
	checked := "" // what reachRefusal checks: a POST's body
	if r.Method == http.MethodPost {
		checked = path
	}
	req, bad := inspect(body, ex.encoding, p.cfg.MaxBody, checked, func(cost int64) (func(), bool) {
		if !p.checking.acquire(r.Context(), cost) {
			return nil, false
		}
		return func() { p.checking.release(cost) }, true
	})
	if bad != nil {
		apiError(w, rt.api, bad.status, "modelproxy: "+bad.msg)
		ex.status, ex.err = bad.status, bad.msg
		p.tr.write(ex) // what was refused, in the transcript too
		return
	}
	ex.model = req.Model
	var res *reservation
	if rt.model {
		if req.Background {
			apiError(w, rt.api, http.StatusBadRequest, "modelproxy: background responses are not allowed: the proxy could not bound or record them")
			return
		}
		if !p.acquire(r.Context()) {
			return // the agent went away while waiting for a slot
		}
		defer p.release()
		var reason string
		if res, reason = p.ledger.admit(req.Model, req.inputEstimate(), req.maxOutput()); reason != "" {
			apiError(w, rt.api, http.StatusBadRequest, reason)
			return
		}
	}
	defer func() {
		if res != nil {
			ex.usage.Requests = 1
			p.ledger.settle(res, &ex.usage, ex.reported)
		}
		p.tr.write(ex)
	}()
	resp, err := p.send(r.Context(), r, rt.api, path, body)
	if err != nil {
		ex.err = p.redact(err.Error())
		if r.Context().Err() == nil {
			if rt.model {
				p.note(rt.api, &Failure{Message: "failed: " + unwrapURLError(err, p.redact)})
			}
			apiError(w, rt.api, http.StatusBadGateway, "modelproxy: upstream: "+ex.err)
		}
		return
	}
	defer resp.Body.Close()
	ex.status = resp.StatusCode
	ex.response = newCapture(p.cfg.MaxEntryBytes, resp.Header.Get("Content-Type"))
	copyHeader(w.Header(), resp.Header)
	if resp.StatusCode >= 300 {
		clean := p.relayError(w, resp, ex)
		if rt.model && resp.StatusCode >= 400 {
			p.note(rt.api, answered(resp.StatusCode, clean))
		}
		return
	}
	if rt.model {
		p.note(rt.api, nil)
	}
	w.WriteHeader(resp.StatusCode)
	if err := relay(w, resp.Body, ex.response); err != nil {
		ex.err = p.redact(err.Error())
	}
	// The usage counts when the answer reported it, even if the agent hung up on the last bytes
	// (a CLI may close as soon as it has read the final event); when it went away earlier, the
	// upstream stops and reports none, and the reservation is charged.
	ex.usage, ex.reported = ex.response.usage()
}

// send builds the upstream request: the agent's headers minus credentials
// and hop-by-hop headers, plus the real credential.
func (p *Proxy) send(ctx context.Context, r *http.Request, api API, path string, body []byte) (*http.Response, error) {
	u := *p.upstream[api]
	u.Path += strings.TrimPrefix(path, "/"+string(api))
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		if !dropRequestHeader(k) {
			req.Header[k] = append([]string(nil), vs...)
		}
	}
	if api == OpenAI {
		req.Header.Set("Authorization", "Bearer "+p.key[api])
	} else {
		req.Header.Set("X-Api-Key", p.key[api])
	}
	return p.client.Do(req)
}

// relayError passes an upstream error to the agent with every credential
// redacted; its body is bounded.
func (p *Proxy) relayError(w http.ResponseWriter, resp *http.Response, ex *exchange) []byte {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		ex.err = p.redact(err.Error())
	}
	clean := []byte(p.redact(string(raw)))
	_, _ = ex.response.Write(clean)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(clean)
	return clean
}

// unwrapURLError is the cause of a failed upstream request without the *url.Error's "Post
// URL:" prefix (the URL is the Failure's origin), redacted.
func unwrapURLError(err error, redact func(string) string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return redact(err.Error())
}

// relay copies a response to the agent as it arrives, flushing every read
// so streams stay streams, and feeds the capture.
func relay(w http.ResponseWriter, body io.Reader, c *capture) error {
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			_, _ = c.Write(buf[:n])
			if _, werr := w.Write(buf[:n]); werr != nil {
				return fmt.Errorf("client went away: %w", werr)
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("upstream stream: %w", err)
		}
	}
}

var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

func dropRequestHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "X-Api-Key", "Cookie", "Content-Length", "Accept-Encoding", "Host", "Forwarded", "X-Forwarded-For",
		// Which account pays is the credential's, never the agent's choice.
		"Openai-Organization", "Openai-Project", "Anthropic-Organization", "Anthropic-Workspace":
		return true
	}
	return hopByHop[http.CanonicalHeaderKey(k)]
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		if hopByHop[k] || k == "Set-Cookie" || k == "Content-Length" {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// acquire waits for a slot for a generation request; false when ctx ends first.
func (p *Proxy) acquire(ctx context.Context) bool {
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p *Proxy) release() { <-p.slots }

// Listen serves p on a free port of 127.0.0.1 until ctx ends; it returns
// the proxy's root URL once it accepts connections. When ctx ends, the
// requests in flight finish (for up to 10 s) before done receives.
func Listen(ctx context.Context, p *Proxy) (string, <-chan error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("modelproxy: listen on 127.0.0.1: %w", err)
	}
	return "http://" + ln.Addr().String(), Serve(ctx, p, ln), nil
}

// Serve serves p on ln until ctx ends, as Listen does on its own listener (a proxy that other
// hosts reach, such as a Kubernetes Deployment's, listens where its caller says). When ctx
// ends, the requests in flight finish (for up to 10 s) before done receives.
func Serve(ctx context.Context, p *Proxy, ln net.Listener) (done <-chan error) {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	var once sync.Once
	go func() {
		<-ctx.Done()
		once.Do(func() {
			// Gracefully: a request still in flight settles its usage and writes its transcript
			// entry (its client may have read the whole answer already) before the server stops.
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if srv.Shutdown(sctx) != nil {
				_ = srv.Close()
			}
		})
	}()
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	return errc
}

// BaseURL is what an agent CLI speaking api is given as its base URL to reach the proxy at
// root: root+"/openai/v1" for OpenAI, root+"/anthropic" for Anthropic (the routes above).
func (a API) BaseURL(root string) string {
	if a == Anthropic {
		return root + "/anthropic"
	}
	return root + "/openai/v1"
}

// budget is an amount (bytes) that waiters take parts of and give back: a part that fits now is
// taken at once, whoever waits for a larger one.
type budget struct {
	mu      sync.Mutex
	free    int64
	changed chan struct{} // closed, and replaced, when parts are given back
}

func newBudget(n int64) *budget { return &budget{free: n, changed: make(chan struct{})} }

// acquire takes n, waiting until that much is free; false when ctx ended first.
func (b *budget) acquire(ctx context.Context, n int64) bool {
	for {
		b.mu.Lock()
		if n <= b.free {
			b.free -= n
			b.mu.Unlock()
			return true
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// release gives n back.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}
