//go:build unix

package local

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/modelproxy"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// The real pinned CLIs, run by the local runner behind the model proxy its supervisor starts,
// against the scripted model: the runner's environment is an operator's shell holding a code-host
// token, a cloud secret and the model credential; the agent's own shell tool prints what it sees.

// proxyFleet runs one skill with preset, its model policy set by model (flow YAML, "" for none).
func proxyFleet(preset, model string) fleet {
	box := "{ agent: " + preset
	if model != "" {
		box += ", model: " + model
	}
	return fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  worker:
    behavior: skills/worker
    triggers: [{ dispatch: true }]
policy:
  box:
    local: ` + box + ` }
`, files: map[string]string{"skills/worker/SKILL.md": "# worker\nPrint your environment with the shell tool.\n"}}
}

// codexModel is a model codex offers its tools for (the scripted model's catalog is empty).
const codexModel = "gpt-5-codex"

// proxyRun launches worker with the real CLI of preset against fake and waits for its end.
func proxyRun(t *testing.T, preset, model string, fake *modelfake.Server) (*Runner, store.Session) {
	t.Helper()
	return proxyRunFleet(t, preset, proxyFleet(preset, model), fake, nil)
}

// proxyRunFleet is proxyRun of fleet f, its runner adjusted by adjust (nil for none) before the
// launch.
func proxyRunFleet(t *testing.T, preset string, f fleet, fake *modelfake.Server, adjust func(*Runner)) (*Runner, store.Session) {
	t.Helper()
	dir := installFleet(t, f, true)
	r := newRunner(t, dir, Options{Env: cliEnv(t, preset, fake), Exe: builtAutonomy(t)})
	if adjust != nil {
		adjust(r)
	}
	s := launch(t, r, LaunchRequest{Actor: "worker"})
	waitEndedWithin(t, r, s.ID, 150)
	r.Wait()
	got, _, _ := r.Store.Get(t.Context(), s.ID)
	return r, got
}

// cliEnv is the runner's environment for the real CLI of preset against fake: an operator's
// shell, with the CLI on PATH and a home of its own.
func cliEnv(t *testing.T, preset string, fake *modelfake.Server) []string {
	t.Helper()
	program := agentclitest.Require(t, preset)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	base := fake.OpenAIBaseURL()
	if preset == "claude" {
		base = fake.AnthropicBaseURL()
	}
	return append(operatorEnv(filepath.Dir(program)+string(os.PathListSeparator)+os.Getenv("PATH")),
		"HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "TMPDIR="+os.TempDir(),
		"OPENAI_BASE_URL="+base, "ANTHROPIC_BASE_URL="+base,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
}

// waitEndedWithin is waitEnded for a real CLI: up to seconds.
func waitEndedWithin(t *testing.T, r *Runner, id string, seconds int) store.Session {
	t.Helper()
	for i := 0; i < seconds*10; i++ {
		s, ok, err := r.Store.Get(t.Context(), id)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", id, ok, err)
		}
		if s.Status.Ended() {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("session %s did not end in %d s:\n%s", id, seconds, sessionLogOf(r, id))
	return store.Session{}
}

func sessionLogOf(r *Runner, id string) string {
	data, _ := os.ReadFile(filepath.Join(r.In.Dir, filepath.FromSlash(StateDir), "logs", id+".log"))
	return string(data)
}

// transcriptOf parses a session's transcript.
func transcriptOf(t *testing.T, r *Runner, id string) []modelproxy.Entry {
	t.Helper()
	path, _ := r.In.TranscriptPath(id)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("its transcript: %v", err)
	}
	var es []modelproxy.Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e modelproxy.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("transcript line: %v", err)
		}
		es = append(es, e)
	}
	if bytes.Contains(data, []byte("operator")) {
		t.Errorf("the transcript holds the real credential")
	}
	return es
}

// generations counts the generation requests the scripted model answered, after checking each
// model request carried the real credential and never the placeholder.
func generations(t *testing.T, fake *modelfake.Server) (n int64) {
	t.Helper()
	for _, q := range fake.Requests() {
		auth := q.Header.Get("Authorization") + q.Header.Get("X-Api-Key")
		if q.API != "" && !strings.Contains(auth, "operator") {
			t.Errorf("%s %s reached the model without the real key: %q", q.Method, q.Path, auth)
		}
		if strings.Contains(auth, "autonomy-proxy-") {
			t.Errorf("%s %s carried the placeholder upstream", q.Method, q.Path)
		}
		if q.Method == "POST" && (strings.HasSuffix(q.Path, "/responses") || strings.HasSuffix(q.Path, "/messages")) {
			n++
		}
	}
	return n
}

func TestPresetSessionsRunBehindTheProxy(t *testing.T) {
	for _, c := range []struct{ preset, model string }{{"codex", codexModel}, {"claude", ""}} {
		t.Run(c.preset, func(t *testing.T) {
			// worker holds no agent:* capability: the autonomy its shell finds on its PATH refuses
			// to launch (codex's shell is not a login shell: allow_login_shell=false): its jail
			// keeps the runner's state read-only (steps_cli_test.go), and the session's supervisor,
			// asked through its door, refuses it the capability.
			self := "autonomy"
			fake := modelfake.Start(modelfake.Turn{Shell: "env"}, modelfake.Turn{Shell: self + " runner launch worker 2>&1 || echo launch-refused"}, finalResult("Looked around."))
			defer fake.Close()
			r, s := proxyRun(t, c.preset, c.model, fake)
			if s.Status != ir.Done || fake.Err() != nil {
				t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			scripted := fake.Scripted()
			if len(scripted) < 2 || len(scripted[1].ToolOutputs) == 0 {
				t.Fatalf("the env tool output never reached the model: %d scripted requests", len(scripted))
			}
			envOut := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]
			for _, secret := range []string{"GH_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "=operator", "aws-operator", "ghp_operator"} {
				if strings.Contains(envOut, secret) {
					t.Errorf("the agent's shell sees %s:\n%s", secret, envOut)
				}
			}
			if len(scripted) < 3 || len(scripted[2].ToolOutputs) == 0 {
				t.Fatalf("the launch's output never reached the model: %d scripted requests", len(scripted))
			}
			if out := scripted[2].ToolOutputs[len(scripted[2].ToolOutputs)-1]; !strings.Contains(out, "launch-refused") || !strings.Contains(out, "denied") || !strings.Contains(out, `may not launch "worker": it holds no agent:launch`) {
				t.Errorf("autonomy runner launch from the agent's shell was not denied:\n%s", out)
			}
			if all, _ := r.Store.List(t.Context(), store.ListOptions{All: true}); len(all) != 1 {
				t.Errorf("%d sessions, want the worker's alone", len(all))
			}
			if !strings.Contains(envOut, "_API_KEY=autonomy-proxy-") {
				t.Errorf("the agent's env does not hold the placeholder:\n%s", envOut)
			}
			n := generations(t, fake)
			u, ok, err := r.Store.GetUsage(t.Context(), s.ID)
			if err != nil || !ok || n == 0 || u.Requests != n || u.InputTokens != 100*n || u.OutputTokens != 10*n || u.Estimated {
				t.Errorf("usage %+v (%v %v), want %d requests of 100 in / 10 out each", u, ok, err, n)
			}
			var gen int64
			for _, e := range transcriptOf(t, r, s.ID) {
				gen += e.Usage.Requests
				if e.Usage.Requests == 1 && (e.Usage.InputTokens != 100 || e.Usage.OutputTokens != 10) {
					t.Errorf("transcript entry %d: usage %+v", e.Seq, e.Usage)
				}
			}
			if gen != n {
				t.Errorf("the transcript holds %d generations, the model answered %d", gen, n)
			}
		})
	}
}

func TestBudgetStopsAPresetSession(t *testing.T) {
	for _, c := range []struct{ preset, model string }{
		{"codex", "{ name: " + codexModel + ", budget: { requests: 2 } }"},
		{"claude", "{ budget: { requests: 2 } }"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			fake := modelfake.Start(modelfake.Turn{Shell: "echo one"}, modelfake.Turn{Shell: "echo two"},
				modelfake.Turn{Shell: "echo three"}, modelfake.Turn{Text: "Done."})
			defer fake.Close()
			r, s := proxyRun(t, c.preset, c.model, fake)
			if s.Status != ir.Failed || !strings.HasPrefix(s.Reason, "budget exhausted: 2 of 2 requests used") {
				t.Fatalf("ended %s (%s), want failed: budget exhausted\n%s", s.Status, s.Reason, sessionLogOf(r, s.ID))
			}
			if u, ok, _ := r.Store.GetUsage(t.Context(), s.ID); !ok || u.Requests != 2 {
				t.Errorf("usage %+v, want 2 requests", u)
			}
		})
	}
}

// A preset's session holds a placeholder and the proxy's URL, never the runner's credential; an
// actor that spent its daily budget does not start.
func TestPresetSessionGetsThePlaceholderAndTheDailyBudget(t *testing.T) {
	dir := installFleet(t, proxyFleet("codex", "{ daily: { requests: 5 } }"), true)
	path := fakeProgram(t, "codex", "#!/bin/sh\ncat > /dev/null\nenv > \"$AUTONOMY_DIR/env-$AUTONOMY_SESSION\"\n"+deliverResult+"\n")
	env := append(operatorEnv(path), "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
	r := newRunner(t, dir, Options{Env: env})
	s := launch(t, r, LaunchRequest{Actor: "worker"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("worker ended %s: %s", got.Status, got.Reason)
	}
	r.Wait()
	seen := readFile(t, filepath.Join(dir, "env-"+s.ID))
	if !strings.Contains(seen, "\nOPENAI_API_KEY=autonomy-proxy-") || !strings.Contains(seen, "\nOPENAI_BASE_URL=http://127.0.0.1:") || strings.Contains(seen, "=operator") || strings.Contains(seen, ":9/v1") {
		t.Errorf("the agent's model variables:\n%s", seen)
	}
	if u, ok, err := r.Store.GetUsage(t.Context(), s.ID); !ok || err != nil || u.Requests != 0 {
		t.Errorf("its usage: %+v %v %v", u, ok, err)
	}
	if err := r.Store.PutUsage(t.Context(), store.Usage{Session: "earlier", Actor: "worker", Usage: modelproxy.Usage{Requests: 5}}); err != nil {
		t.Fatal(err)
	}
	s = launch(t, r, LaunchRequest{Actor: "worker"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Failed || got.Reason != "budget exhausted: actor worker used 5 of its 5 requests today" {
		t.Errorf("worker past its daily budget ended %s: %s", got.Status, got.Reason)
	}
}
