package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/playbook/workflow"
)

// maxRedirects is how many redirects a web step follows, each to an allowed host.
const maxRedirects = 5

// CheckWeb refuses, at its command, each web step policy.box.web refuses: every one when the
// policy lists no host, and one whose URL (written in the step) names a host it does not list.
// A URL taken from a reference is checked when the step runs.
func CheckWeb(w *workflow.Workflow, pol *resolved.WebPolicy) ir.Diagnostics {
	if w == nil {
		return nil
	}
	var d ir.Diagnostics
	for _, s := range w.Steps {
		if s.Namespace != "web" {
			continue
		}
		host := ""
		if words, err := Words(s.Rest); err == nil && len(words) == 1 && !strings.Contains(words[0], "$") {
			if u, err := url.Parse(words[0]); err == nil {
				host = u.Hostname()
			}
		}
		if pol != nil && host == "" {
			continue
		}
		if why, fix := pol.Refuses(host); why != "" {
			d = append(d, ir.Diagnostic{File: w.File, Pos: s.Command.Pos, Severity: ir.Error, Message: fmt.Sprintf("step %q: %s", s.ID.Value, why), Hint: fix})
		}
	}
	return d
}

// runWeb fetches the one URL of a web step (GET, http or https) from a host pol allows,
// following at most maxRedirects redirects, each to an allowed host; the body is the step's
// output, capped as any step's; a status outside 2xx fails the step.
func runWeb(ctx context.Context, argv []string, pol *resolved.WebPolicy, out *capped, d time.Duration) error {
	if len(argv) != 1 {
		return fmt.Errorf("a web step fetches one URL: web https://HOST/PATH")
	}
	u, err := url.Parse(argv[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%q is not an http or https URL with a host", argv[0])
	}
	if why, fix := pol.Refuses(u.Hostname()); why != "" {
		return fmt.Errorf("%s (%s)", why, fix)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if why, _ := pol.Refuses(req.URL.Hostname()); why != "" {
			return fmt.Errorf("a redirect to %s: %s", req.URL.Redacted(), why)
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("timed out after %v", d)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return ue.Err
		}
		return err
	}
	return readBody(resp, out, "GET "+u.Redacted())
}
