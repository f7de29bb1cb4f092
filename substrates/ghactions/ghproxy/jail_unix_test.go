//go:build linux

package ghproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/egress"
)

func serve(t *testing.T, body string, tls bool) string {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Port()
}

// TestJail runs a command as gh jail runs the agent, with the real bubblewrap and socat: it
// reaches the model proxy and the GitHub API, not another loopback port; through the egress
// proxy, a listed address and not another; and its exit code is the step's. With
// private_egress_guard on, even the listed private address is refused.
func TestJail(t *testing.T) {
	model, api, other, target := serve(t, "model-reached", false), serve(t, "api-reached", false), serve(t, "other-reached", false), serve(t, "target-reached", true)
	script := `curl -sS --max-time 5 http://127.0.0.1:` + model + `/; echo
curl -sS --max-time 5 http://127.0.0.1:` + api + `/; echo
curl -sS --max-time 5 http://127.0.0.1:` + other + `/ || echo other-blocked
env -u NO_PROXY -u no_proxy curl -sSk --max-time 5 https://127.0.0.1:` + target + `/ || echo listed-refused
echo
env -u NO_PROXY -u no_proxy curl -sSk --max-time 5 https://127.0.0.2:` + target + `/ || echo unlisted-refused
exit 3
`
	for _, guard := range []string{"false", "true"} {
		t.Run("guard="+guard, func(t *testing.T) {
			temp := t.TempDir()
			env := map[string]string{
				URLEnv: "http://127.0.0.1:" + model + "/openai/v1", "GITHUB_API_URL": "http://127.0.0.1:" + api,
				EgressAllowEnv: `["127.0.0.1:` + target + `"]`, EgressGuardEnv: guard, "RUNNER_TEMP": temp,
			}
			var out bytes.Buffer
			code, err := Jail(context.Background(), func(k string) string { return env[k] }, []string{"/bin/sh", "-c", script}, strings.NewReader(""), &out, &out)
			if err != nil || code != 3 {
				t.Fatalf("Jail: %d %v\n%s", code, err, out.String())
			}
			got := out.String()
			for _, want := range []string{"model-reached", "api-reached", "other-blocked", "unlisted-refused"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q in:\n%s", want, got)
				}
			}
			if strings.Contains(got, "other-reached") {
				t.Errorf("another loopback port was reached:\n%s", got)
			}
			if reached := strings.Contains(got, "target-reached"); reached != (guard == "false") {
				t.Errorf("guard %s: the listed private address reached: %t\n%s", guard, reached, got)
			}
			data, err := os.ReadFile(filepath.Join(temp, Dir, EgressFile))
			if err != nil {
				t.Fatal(err)
			}
			var ds []egress.Decision
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var d egress.Decision
				if err := json.Unmarshal([]byte(line), &d); err != nil {
					t.Fatalf("egress log line %q: %v", line, err)
				}
				ds = append(ds, d)
			}
			if len(ds) != 2 || ds[0].Allowed != (guard == "false") || ds[1].Allowed || ds[1].Target != "127.0.0.2:"+target {
				t.Errorf("the egress log: %+v", ds)
			}
		})
	}
}

func TestJailConfigErrors(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EgressAllowEnv: "[]"}, "AUTONOMY_MODEL_URL is \"\", not the model proxy's URL"},
		{map[string]string{URLEnv: "https://api.openai.com/v1", EgressAllowEnv: "[]"}, "not the model proxy's URL"},
		{map[string]string{URLEnv: "http://127.0.0.1:9/v1", EgressAllowEnv: "registry.npmjs.org"}, "AUTONOMY_EGRESS_ALLOW must be a JSON list"},
		{map[string]string{URLEnv: "http://127.0.0.1:9/v1", EgressAllowEnv: `["https://x.org"]`}, "names a scheme"},
		{map[string]string{URLEnv: "http://127.0.0.1:9/v1", EgressAllowEnv: "[]", EgressGuardEnv: "yes"}, "AUTONOMY_EGRESS_GUARD must be true or false"},
	} {
		_, _, err := jailConfig(func(k string) string { return c.env[k] })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.env, err, c.want)
		}
	}
	ports, cfg, err := jailConfig(func(k string) string {
		return map[string]string{URLEnv: "http://127.0.0.1:9/v1", EgressAllowEnv: "[]"}[k]
	})
	if err != nil || len(ports) != 1 || ports[0] != 9 || len(cfg.Allow) != 1 || cfg.Allow[0].String() != "api.github.com" {
		t.Errorf("the default: %v %+v %v (want the model proxy bridged and api.github.com allowed)", ports, cfg.Allow, err)
	}
}
