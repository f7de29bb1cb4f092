//go:build unix

package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir/resolved"
)

// TestWebSteps: a web step fetches one URL from a host policy.box.web.allow lists (none listed:
// refused at validation, naming the key), follows redirects only to listed hosts, and its body is
// capped as any step's output.
func TestWebSteps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Write([]byte(`{"title": "hello"}`))
		case "/away":
			u, _ := url.Parse("http://" + r.Host)
			http.Redirect(w, r, "http://localhost:"+u.Port()+"/page", http.StatusFound)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 5000)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	allow := &resolved.WebPolicy{Allow: []string{"127.0.0.1"}}
	run := func(path string, pol *resolved.WebPolicy) Envelope {
		e, ws, file := setup(t, "name: w\nsteps:\n  - id: get\n    command: web "+srv.URL+path+"\n    output: json\n")
		return e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, Web: pol, MaxOutputBytes: 1000})
	}
	if env := run("/page", allow); !env.OK || string(env.Output[0].JSON) != `{"title":"hello"}` {
		t.Fatalf("an allowed fetch: %+v %+v", env.Error, env.Output)
	}
	if env := run("/page", nil); env.OK || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), `wf.yml:4:14: step "get": web steps are off: no host is listed in policy.box.web.allow`) {
		t.Errorf("no policy: %+v", env.Error)
	}
	if env := run("/page", &resolved.WebPolicy{Allow: []string{"*.example.com"}}); env.OK || !strings.Contains(strings.Join(env.Error.Diagnostics, "\n"), `the host "127.0.0.1" is not in policy.box.web.allow [*.example.com]`) {
		t.Errorf("a host not listed: %+v", env.Error)
	}
	for path, want := range map[string]string{"/away": `a redirect to http://localhost:`, "/big": "passed the cap of 1000 bytes", "/missing": "answered 404"} {
		if env := run(path, allow); env.OK || !strings.Contains(env.Error.Message, want) {
			t.Errorf("%s: %+v", path, env.Error)
		}
	}
	// A URL from a reference is checked when the step runs; a compiled step carries the policy.
	spec := StepSpec{ID: "get", Namespace: "web", Argv: []string{"http://evil.example/x"}, Steps: []string{"get"}, Web: allow}
	if _, err := (&Engine{}).RunStep(context.Background(), spec, &Data{}, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), `the host "evil.example" is not in policy.box.web.allow`) {
		t.Errorf("a compiled step: %v", err)
	}
	for host, ok := range map[string]bool{"a.example.com": true, "A.Example.com.": true, "example.com": false, "badexample.com": false} {
		why, _ := (&resolved.WebPolicy{Allow: []string{"*.example.com"}}).Refuses(host)
		if (why == "") != ok {
			t.Errorf("%s: %q", host, why)
		}
	}
}
