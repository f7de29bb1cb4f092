//go:build linux

package ghproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestJailConfines: inside gh jail the agent writes its home, the checkout, its final message
// and the safe outputs, and nothing of the runner's: not the file commands (nor has it their
// variables or the runner's tokens), not the actions the later steps run, not autonomy's binary,
// not the audit files; and it cannot make a user namespace.
func TestJailConfines(t *testing.T) {
	model := serve(t, "model-reached", false)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	work := filepath.Join(home, "work")
	temp := filepath.Join(work, "_temp")
	env := map[string]string{
		URLEnv: "http://127.0.0.1:" + model + "/openai/v1", EgressAllowEnv: `[]`, "RUNNER_TEMP": temp, "HOME": home,
		"RUNNER_WORKSPACE": filepath.Join(work, "repo"), "GITHUB_WORKSPACE": filepath.Join(work, "repo", "repo"),
		"AUTONOMY_RESULT": filepath.Join(temp, "autonomy-result.json"), "AUTONOMY_OUTPUTS": filepath.Join(temp, "autonomy-outputs", "outputs.jsonl"),
		TempWriteEnv: `["autonomy-steps"]`,
	}
	files := map[string]string{
		"GITHUB_ENV":   filepath.Join(temp, "_runner_file_commands", "set_env_1"),
		"GITHUB_PATH":  filepath.Join(temp, "_runner_file_commands", "add_path_1"),
		"ACTION":       filepath.Join(work, "_actions", "actions", "upload-artifact", "dist", "index.js"),
		"AUTONOMY_BIN": filepath.Join(temp, "autonomy-bin", "autonomy"),
		"AUDIT":        filepath.Join(temp, Dir, UsageFile),
	}
	for k, p := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("runner's\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if k == "GITHUB_ENV" || k == "GITHUB_PATH" {
			t.Setenv(k, p)
		}
	}
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc-secret")
	t.Setenv("OUTSIDE_PID", strconv.Itoa(os.Getpid()))
	for k, v := range env {
		t.Setenv(k, v)
	}
	for _, d := range []string{env["GITHUB_WORKSPACE"], filepath.Dir(env["AUTONOMY_OUTPUTS"])} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := `for p in "$@"; do echo planted >> "$p" && echo "wrote $p"; done
env | grep -E '^(GITHUB_ENV|GITHUB_PATH|ACTIONS_ID_TOKEN_REQUEST_TOKEN)=' && echo runner-env-seen
echo home > "$HOME/.gitconfig" && echo home-written
echo ws > "$GITHUB_WORKSPACE/f" && echo ws-written
echo result > "$AUTONOMY_RESULT" && echo result-written
echo '{}' >> "$AUTONOMY_OUTPUTS" && echo outputs-written
echo state > "$RUNNER_TEMP/autonomy-steps/envelope.json" && echo steps-written
unshare -Ur true && echo userns-made
bwrap --ro-bind / / --unshare-user --unshare-net true && echo nested-bwrap-made
kill -0 "$OUTSIDE_PID" && echo outside-signalled
setsid sh -c 'exec sleep 600.4242' </dev/null >/dev/null 2>&1 &
exit 0
`
	argv := []string{"/bin/sh", "-c", script, "sh"}
	for _, p := range files {
		argv = append(argv, p)
	}
	var out bytes.Buffer
	code, err := Jail(context.Background(), func(k string) string { return env[k] }, argv, strings.NewReader(""), &out, &out)
	if err != nil || code != 0 {
		t.Fatalf("Jail: %d %v\n%s", code, err, out.String())
	}
	got := out.String()
	for _, want := range []string{"home-written", "ws-written", "result-written", "outputs-written", "steps-written"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q: the agent cannot write what it must\n%s", want, got)
		}
	}
	for _, bad := range []string{"wrote ", "runner-env-seen", "userns-made", "nested-bwrap-made", "outside-signalled"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q inside the jail:\n%s", bad, got)
		}
	}
	if pid := lingering("600.4242"); pid != 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("a process the agent started outlived the jail: pid %d", pid)
	}
	for k, p := range files {
		if data, _ := os.ReadFile(p); string(data) != "runner's\n" {
			t.Errorf("%s (%s) was changed: %q", k, p, data)
		}
	}
}

// lingering is the pid of a live process whose command line holds arg, once the kernel has had
// the chance to end it (at most 5s), or 0.
func lingering(arg string) int {
	find := func() int {
		ms, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, m := range ms {
			data, err := os.ReadFile(m)
			stat, serr := os.ReadFile(filepath.Join(filepath.Dir(m), "stat"))
			if err == nil && serr == nil && strings.Contains(string(data), arg) && !strings.Contains(string(stat), ") Z ") {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(m)))
				return pid
			}
		}
		return 0
	}
	for i := 0; i < 100; i++ {
		if find() == 0 {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return find()
}

// TestRunnerInstalls: the folder a Runner.Worker among a process's ancestors is installed in
// (bin/Runner.Worker's grandparent) is found, to be kept read-only in the jail.
func TestRunnerInstalls(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runners", "2.330.0")
	worker := filepath.Join(root, "bin", "Runner.Worker")
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(worker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(worker, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(worker, "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(child, syscall.SIGKILL) }()
	if got := runnerInstalls(child); len(got) != 1 || got[0] != root {
		t.Errorf("runnerInstalls = %v, want [%s]", got, root)
	}
	if got := runnerInstalls(os.Getpid()); len(got) != 0 {
		t.Errorf("no runner among the test's ancestors, yet %v", got)
	}
}

// TestJailTempWrites: the folders of RUNNER_TEMP a jailed command may write are plain names, never
// the audit files' folder nor a runner's.
func TestJailTempWrites(t *testing.T) {
	got, err := tempWrites(func(string) string { return `["autonomy-steps","autonomy-artifacts"]` }, "/rt")
	if err != nil || strings.Join(got, " ") != "/rt/autonomy-steps /rt/autonomy-artifacts" {
		t.Errorf("tempWrites: %v %v", got, err)
	}
	for _, bad := range []string{`["../x"]`, `["a/b"]`, `[".."]`, `[""]`, `["` + Dir + `"]`, `["_runner_file_commands"]`, `"autonomy-steps"`} {
		if _, err := tempWrites(func(string) string { return bad }, "/rt"); err == nil || !strings.Contains(err.Error(), TempWriteEnv) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestJailRelativeRunnerTemp: a relative RUNNER_TEMP is as read-only in the jail as an absolute
// one: the command cannot write the egress log through it.
func TestJailRelativeRunnerTemp(t *testing.T) {
	model := serve(t, "model-reached", false)
	t.Chdir(t.TempDir())
	env := map[string]string{URLEnv: "http://127.0.0.1:" + model + "/openai/v1", EgressAllowEnv: `[]`, "RUNNER_TEMP": "job"}
	t.Setenv("RUNNER_TEMP", "job") // the command's environment is the step's
	var out bytes.Buffer
	script := `echo forged >> "$RUNNER_TEMP/` + Dir + `/` + EgressFile + `" && echo written`
	code, err := Jail(context.Background(), func(k string) string { return env[k] }, []string{"/bin/sh", "-c", script}, strings.NewReader(""), &out, &out)
	if err != nil {
		t.Fatalf("Jail: %d %v\n%s", code, err, out.String())
	}
	log, _ := os.ReadFile(filepath.Join("job", Dir, EgressFile))
	if code == 0 || strings.Contains(out.String(), "written") || strings.Contains(string(log), "forged") {
		t.Errorf("the command wrote RUNNER_TEMP (exit %d):\n%s\nthe log: %s", code, out.String(), log)
	}
}
