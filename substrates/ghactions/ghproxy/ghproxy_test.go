package ghproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
)

// TestMain lets the test binary be the detached server Start spawns.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "ghproxy-serve" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := Serve(ctx, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const realKey = "sk-realGHPROXYkey0123456789abcdef"

// step is one job's env, as the workflow sets it for the model proxy's step.
type step struct {
	env  map[string]string
	temp string
}

func newStep(t *testing.T, upstream, policy string) *step {
	t.Helper()
	temp := t.TempDir()
	s := &step{temp: temp, env: map[string]string{
		"RUNNER_TEMP": temp, "GITHUB_ENV": filepath.Join(temp, "github_env"), "GITHUB_STEP_SUMMARY": filepath.Join(temp, "summary"),
		"OPENAI_API_KEY": realKey, CredentialEnv: "OPENAI_API_KEY", URLEnv: upstream, APIEnv: "openai", PolicyEnv: policy,
	}}
	t.Cleanup(func() { stop(filepath.Join(temp, Dir)) })
	return s
}

func (s *step) getenv(k string) string { return s.env[k] }

// githubEnv is what the step left for the steps after it.
func (s *step) githubEnv(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(s.env["GITHUB_ENV"])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		out[k] = v
	}
	return out
}

func responses(t *testing.T, base, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/responses", strings.NewReader(`{"model":"gpt-5-codex","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"hello"}]}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestStartAndReport: the proxy outlives the step that started it, the steps after it get only
// its URL and a placeholder, the model sees the real key, the server's environment holds no
// credential, and the report stops it and writes the usage the model reported to the summary.
func TestStartAndReport(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "one"}, modelfake.Turn{Text: "two"})
	defer fake.Close()
	s := newStep(t, fake.OpenAIBaseURL(), "")
	base, err := Start(context.Background(), s.getenv, []string{os.Args[0], "ghproxy-serve"})
	if err != nil {
		t.Fatal(err)
	}
	got := s.githubEnv(t)
	ph := got["OPENAI_API_KEY"]
	if got[URLEnv] != base || !strings.HasSuffix(base, "/openai/v1") || !strings.HasPrefix(ph, "autonomy-proxy-") || len(got) != 2 {
		t.Fatalf("GITHUB_ENV %v, base %s", got, base)
	}
	for range 2 {
		if code := responses(t, base, ph); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	if code := responses(t, base, realKey); code != 401 {
		t.Errorf("the real key is the proxy's key: status %d", code)
	}
	if h := fake.Requests()[0].Header.Get("Authorization"); h != "Bearer "+realKey {
		t.Errorf("the model saw %q", h)
	}
	pidData, _ := os.ReadFile(filepath.Join(s.temp, Dir, pidFile))
	var pid int
	fmt.Sscan(string(pidData), &pid)
	if environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && strings.Contains(string(environ), realKey) {
		t.Errorf("the server's environment holds the credential")
	}
	var out strings.Builder
	rec, err := Report(s.getenv, &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := (modelproxy.Usage{Requests: 2, InputTokens: 200, OutputTokens: 20}); rec.Usage.Requests != want.Requests ||
		rec.Usage.InputTokens != want.InputTokens || rec.Usage.OutputTokens != want.OutputTokens || rec.Exhausted != "" {
		t.Errorf("usage %+v, want %+v", rec, want)
	}
	if code := responsesNoFail(base, ph); code != 0 {
		t.Errorf("the proxy still answers after the report: %d", code)
	}
	summary, _ := os.ReadFile(s.env["GITHUB_STEP_SUMMARY"])
	if !strings.Contains(string(summary), "| requests | 2 | 250 |") || !strings.Contains(string(summary), "| tokens | 220 | unlimited |") {
		t.Errorf("summary:\n%s", summary)
	}
	tr, _ := os.ReadFile(filepath.Join(s.temp, Dir, TranscriptFile))
	if n := strings.Count(string(tr), "\n"); n != 2 || strings.Contains(string(tr), realKey) {
		t.Errorf("transcript of %d entries (want the 2 forwarded):\n%s", n, tr)
	}
}

func responsesNoFail(base, key string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/responses", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBudgetExhausted: past a budget of 2 requests the third is refused and the report fails
// with the proxy's reason.
func TestBudgetExhausted(t *testing.T) {
	fake := modelfake.Start(modelfake.Turn{Text: "one"}, modelfake.Turn{Text: "two"}, modelfake.Turn{Text: "three"})
	defer fake.Close()
	s := newStep(t, fake.OpenAIBaseURL(), `{"budget":{"requests":2}}`)
	base, err := Start(context.Background(), s.getenv, []string{os.Args[0], "ghproxy-serve"})
	if err != nil {
		t.Fatal(err)
	}
	ph := s.githubEnv(t)["OPENAI_API_KEY"]
	codes := []int{responses(t, base, ph), responses(t, base, ph), responses(t, base, ph)}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 400 {
		t.Errorf("statuses %v, want 200 200 400", codes)
	}
	rec, err := Report(s.getenv, io.Discard)
	if !errors.Is(err, ErrExhausted) || err.Error() != "budget exhausted: 2 of 2 requests used" || rec.Usage.Requests != 2 {
		t.Errorf("report %+v, %v", rec, err)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("the model saw %d requests, want 2", n)
	}
}

// TestStartErrors: a step without what the proxy needs fails, saying what is missing, and
// starts nothing.
func TestStartErrors(t *testing.T) {
	for name, c := range map[string]struct {
		key, value, want string
	}{
		"no credential":     {"OPENAI_API_KEY", "", "OPENAI_API_KEY: the model credential is empty"},
		"no credential env": {CredentialEnv, "", "AUTONOMY_CREDENTIAL_ENV is not set"},
		"bad api":           {APIEnv, "gemini", `AUTONOMY_MODEL_API="gemini": want openai or anthropic`},
		"bad upstream":      {URLEnv, "proxy.example/v1", `is not an http(s) base URL`},
		"bad policy":        {PolicyEnv, `{"budgets":{}}`, "is not the model policy the workflow compiles"},
		"no GITHUB_ENV":     {"GITHUB_ENV", "", "GITHUB_ENV is not set"},
	} {
		s := newStep(t, "", "")
		s.env[c.key] = c.value
		_, err := Start(context.Background(), s.getenv, []string{os.Args[0], "ghproxy-serve"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(s.temp, Dir, pidFile)); err == nil {
			t.Errorf("%s: a proxy started", name)
		}
	}
	if _, err := Report(newStep(t, "", "").getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "no usage: the model proxy did not run") {
		t.Errorf("report without a proxy: %v", err)
	}
}

// TestUpstream: the base URL the agent would have used becomes the proxy's upstream origin.
func TestUpstream(t *testing.T) {
	for _, c := range []struct {
		api        modelproxy.API
		base, want string
	}{
		{modelproxy.OpenAI, "", ""},
		{modelproxy.OpenAI, "https://proxy.example/v1", "https://proxy.example"},
		{modelproxy.OpenAI, "https://proxy.example/v1/", "https://proxy.example"},
		{modelproxy.OpenAI, "https://model-proxy.example.com", "https://model-proxy.example.com"},
		{modelproxy.Anthropic, "https://proxy.example/v1", "https://proxy.example/v1"},
		{modelproxy.Anthropic, "http://127.0.0.1:9", "http://127.0.0.1:9"},
	} {
		if got, err := upstream(c.api, c.base); err != nil || got != c.want {
			t.Errorf("upstream(%s, %q) = %q, %v; want %q", c.api, c.base, got, err, c.want)
		}
	}
}
