// Package modelproxy is the model proxy a substrate starts beside an agent,
// outside the agent's sandbox: the agent's CLI reaches it as its model
// provider (codex's model_providers.<id>.base_url, claude's
// ANTHROPIC_BASE_URL) and holds only a per-session placeholder key; the
// proxy holds the real credential, forwards the model APIs the presets use,
// enforces the run's budget and records a transcript and the usage the API
// reports.
//
// What the proxy forwards is an allowlist, so the credential cannot be used
// for anything but inference:
//
//	/openai/v1/responses          POST  (codex; base_url = URL()+"/openai/v1")
//	/openai/v1/chat/completions   POST
//	/openai/v1/models             GET
//	/anthropic/v1/messages        POST  (claude; ANTHROPIC_BASE_URL = URL()+"/anthropic")
//	/anthropic/v1/messages/count_tokens POST
//	/anthropic/v1/models          GET
//	/anthropic/api/hello          HEAD, GET (answered by the proxy itself)
//
// Everything else is refused with 404, a WebSocket upgrade (codex tries one
// for the Responses API) with 426 so the CLI falls back to HTTP, and a
// request that does not carry the placeholder with 401. Request bodies are
// bounded (Config.MaxBody).
//
// The budget (requests, tokens, cost) is checked when a request arrives:
// tokens and cost are known only once a response has been read, so the
// request that crosses a token or cost limit completes and the next one is
// refused. A refusal is HTTP 400 in the API's own error shape with a message
// starting "budget exhausted:", which both pinned CLIs print before they
// exit 1 (a 429 would make them retry); Exhausted reports the same reason
// so the substrate can end the session failed with it.
//
// The transcript is JSON lines, one Entry per forwarded request, bounded per
// entry and in total. No header is recorded, and every credential (and
// anything shaped like an API key) is redacted from the transcript and from
// error bodies passed back to the agent.
package modelproxy
