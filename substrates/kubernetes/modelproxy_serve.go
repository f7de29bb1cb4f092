package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
)

// ServeModelProxy is the model proxy's entry point (ModelProxyArgs, its Deployment's container):
// it serves internal/modelproxy on EnvModelListen (":8787" by default) until ctx ends or the
// pod is stopped, forwarding the requests that carry the placeholder EnvModelKey to the model
// endpoint (EnvModelUpstream, else the public API of EnvModelAPI) with the real credential
// EnvModelCredential in its place, which the Deployment reads from the fleet's Secret. It prints
// where it listens, then the usage when it stops.
func ServeModelProxy(ctx context.Context, env []string, out io.Writer) error {
	get := func(k string) string { return sessionenv.Lookup(env, k) }
	api := modelproxy.API(get(EnvModelAPI))
	if api != modelproxy.OpenAI && api != modelproxy.Anthropic {
		return exitcode.Usagef("runner model-proxy: $%s is %q, not openai or anthropic: this verb is the model proxy's entry point, whose Deployment sets it (docs/kubernetes.md)", EnvModelAPI, api)
	}
	key, placeholder := get(EnvModelCredential), get(EnvModelKey)
	if placeholder == "" {
		return exitcode.Usagef("runner model-proxy: $%s is not set: the Deployment compile writes sets it (docs/kubernetes.md)", EnvModelKey)
	}
	if key == "" {
		return exitcode.Usagef("runner model-proxy: $%s is empty: create the Secret the Deployment names with the model credential, e.g. kubectl create secret generic %s --from-literal=OPENAI_API_KEY=sk-… (docs/kubernetes.md, \"The model proxy\")", EnvModelCredential, DefaultModelSecret)
	}
	cfg := modelproxy.Config{Placeholder: placeholder}
	upstream := strings.TrimSuffix(get(EnvModelUpstream), "/")
	if api == modelproxy.Anthropic {
		cfg.AnthropicKey, cfg.AnthropicUpstream = key, upstream
	} else {
		cfg.OpenAIKey, cfg.OpenAIUpstream = key, strings.TrimSuffix(upstream, "/v1")
	}
	p, err := modelproxy.New(cfg)
	if err != nil {
		return exitcode.Usagef("runner model-proxy: %v", err)
	}
	addr := get(EnvModelListen)
	if addr == "" {
		addr = fmt.Sprintf(":%d", ModelProxyPort)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitcode.Usagef("runner model-proxy: %v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Fprintf(out, "model proxy listening on %s (%s API)\n", ln.Addr(), api)
	err = <-modelproxy.Serve(ctx, p, ln)
	u := p.Usage()
	fmt.Fprintf(out, "model proxy stopped: %d requests, %d input and %d output tokens\n", u.Requests, u.InputTokens, u.OutputTokens)
	if err != nil && !errors.Is(err, context.Canceled) {
		return exitcode.Problemf("runner model-proxy: %v", err)
	}
	return nil
}
