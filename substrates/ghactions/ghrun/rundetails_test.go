package ghrun_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// listCalls counts the run lists the fake answered.
func listCalls(srv *ghfake.Server) int {
	n := 0
	for _, q := range srv.Requests() {
		if q.Method == "GET" && strings.HasSuffix(q.Path, "/runs") {
			n++
		}
	}
	return n
}

// TestLaunchNamesTheRunAtOnce: a server that returns run details gives the session id with the
// dispatch: no list is polled, even while lists would not show the run for an hour.
func TestLaunchNamesTheRunAtOnce(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{Visibility: time.Hour})
	r := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.FindTimeout = 10 * time.Millisecond })
	s, err := r.Launch(context.Background(), "develop", ir.LaunchParams{"ISSUE": "7"})
	if err != nil {
		t.Fatal(err)
	}
	runs := srv.Runs()
	if len(runs) != 1 || s.ID != strconvID(runs[0].ID) || s.Status != ir.Running {
		t.Fatalf("session %+v; runs %+v", s, runs)
	}
	if n := listCalls(srv); n != 0 {
		t.Errorf("launch listed runs %d times; the dispatch named the run", n)
	}
}

// TestGetParamsFromAnotherRunner: the params come back from a runner that did not launch the
// session (nothing of the launcher's memory), on both kinds of server.
func TestGetParamsFromAnotherRunner(t *testing.T) {
	t.Parallel()
	params := ir.LaunchParams{"ISSUE": "it's \"42\" $(id) ${{ github.token }}\nline ✓"}
	for _, noContent := range []bool{false, true} {
		srv := newFake(t, ghfake.Options{DispatchNoContent: noContent})
		s, err := newTestRunner(t, srv, nil).Launch(context.Background(), "develop", params)
		if err != nil {
			t.Fatal(err)
		}
		other := newTestRunner(t, srv, nil)
		got, ok, err := other.Get(context.Background(), s.ID)
		if err != nil || !ok || got.Agent != "develop" || !maps.Equal(got.Params, params) {
			t.Errorf("204=%v: Get = %+v, %v, %v; want params %q", noContent, got, ok, err, params)
		}
		ls, err := other.List(context.Background())
		if err != nil || len(ls) != 1 || !maps.Equal(ls[0].Params, params) {
			t.Errorf("204=%v: List = %+v, %v", noContent, ls, err)
		}
	}
}

// TestLaunchRefusesOversizeParams: params past ghrun.MaxParamsBytes are refused before any dispatch.
func TestLaunchRefusesOversizeParams(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{})
	r := newTestRunner(t, srv, nil)
	_, err := r.Launch(context.Background(), "develop", ir.LaunchParams{"ISSUE": strings.Repeat("x", ghrun.MaxParamsBytes)})
	if err == nil || !strings.Contains(err.Error(), "more than the 512") || !strings.Contains(err.Error(), "pass a reference") {
		t.Fatalf("Launch = %v, want the size refusal", err)
	}
	if len(srv.Runs()) != 0 {
		t.Errorf("an oversize launch dispatched a run")
	}
}

func strconvID(n int64) string { return strconv.FormatInt(n, 10) }

// TestLaunchOnAServerRefusingRunDetails: a server that refuses return_run_details with 422 (as
// an older GitHub Enterprise Server may) is asked again without it, and the run is found by its
// correlation id.
func TestLaunchOnAServerRefusingRunDetails(t *testing.T) {
	t.Parallel()
	srv := newFake(t, ghfake.Options{DispatchNoContent: true})
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var refused atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/dispatches") {
			body, _ := io.ReadAll(req.Body)
			if strings.Contains(string(body), "return_run_details") {
				refused.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnprocessableEntity)
				io.WriteString(w, `{"message":"Invalid request.\n\n\"return_run_details\" is not a permitted key.","documentation_url":"https://docs.github.com/rest"}`)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			req.ContentLength = int64(len(body))
		}
		proxy.ServeHTTP(w, req)
	}))
	defer front.Close()
	r := newTestRunner(t, srv, func(o *ghrun.RunnerOptions) { o.BaseURL, o.HTTPClient = front.URL, front.Client() })
	s, err := r.Launch(context.Background(), "develop", ir.LaunchParams{"ISSUE": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if runs := srv.Runs(); refused.Load() != 1 || len(runs) != 1 || s.ID != strconvID(runs[0].ID) {
		t.Errorf("refused %d; session %+v; runs %+v", refused.Load(), s, runs)
	}
}
