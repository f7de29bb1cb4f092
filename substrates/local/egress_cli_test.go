//go:build linux

package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/internal/sessionenv"
	"github.com/autonomyhq/autonomy/ir"
)

// The real pinned CLIs, in the network sandbox the supervisor makes: from the agent's shell
// tool, another port of the host's loopback is unreachable while the session completes through
// the model proxy; through the egress proxy, a host policy.box.local.egress.allow names is
// reached and another is refused. The allowed host is a test server on loopback: the test
// resolves its names there and admits that address (egress.Config.TestPermit, which no profile
// key sets), the private guard otherwise as in production.
func TestPresetSessionsReachOnlyTheProxies(t *testing.T) {
	for _, c := range []struct{ preset, model string }{{"codex", codexModel}, {"claude", ""}} {
		t.Run(c.preset, func(t *testing.T) {
			allowed := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "allowed-reached") }))
			defer allowed.Close()
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other-reached") }))
			defer other.Close()
			ap, op := portOfTest(allowed.URL), portOfTest(other.URL)
			fake := modelfake.Start(
				modelfake.Turn{Shell: "curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:" + op + "/ || echo loopback-blocked"},
				modelfake.Turn{Shell: "curl -sSk --max-time 10 https://allowed.test:" + ap + "/; echo; curl -sSk --max-time 10 https://denied.test:" + ap + "/ || echo denied-refused"},
				finalResult("Probed the network."))
			defer fake.Close()
			box := "{ agent: " + c.preset
			if c.model != "" {
				box += ", model: " + c.model
			}
			f := proxyFleet(c.preset, "")
			f.yml = strings.Replace(f.yml, "local: { agent: "+c.preset+" }", "local: "+box+`, egress: { allow: ["allowed.test:`+ap+`"] } }`, 1)
			r, s := proxyRunFleet(t, c.preset, f, fake, func(r *Runner) {
				r.egressTest = func(cfg *egress.Config) {
					cfg.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
						return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
					}
					cfg.TestPermit = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
				}
			})
			if s.Status != ir.Done || fake.Err() != nil {
				t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			scripted := fake.Scripted()
			if len(scripted) < 3 || len(scripted[1].ToolOutputs) == 0 || len(scripted[2].ToolOutputs) == 0 {
				t.Fatalf("the tools' output never reached the model: %d scripted requests\n%s", len(scripted), sessionLogOf(r, s.ID))
			}
			loop := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]
			if strings.Contains(loop, "other-reached") || !strings.Contains(loop, "loopback-blocked") {
				t.Errorf("another loopback port from the agent's shell:\n%s", loop)
			}
			through := scripted[2].ToolOutputs[len(scripted[2].ToolOutputs)-1]
			if !strings.Contains(through, "allowed-reached") || !strings.Contains(through, "denied-refused") ||
				c.preset == "codex" && !strings.Contains(through, "response 403") {
				// claude's own sandbox proxy, between curl and ours, answers our 403 with its 502.
				t.Errorf("through the egress proxy:\n%s", through)
			}
			var decisions []egress.Decision
			path, _ := r.In.TranscriptPath(s.ID)
			data, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + EgressLogSuffix)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var d egress.Decision
				if err := json.Unmarshal([]byte(line), &d); err != nil {
					t.Fatalf("egress log line %q: %v", line, err)
				}
				decisions = append(decisions, d)
			}
			// The CLI's own calls home (codex's to chatgpt.com and github.com) are refused too, and
			// logged; the two the test made are what it checks.
			seen := map[string]egress.Decision{}
			for _, d := range decisions {
				seen[d.Target] = d
			}
			if d := seen["allowed.test:"+ap]; !d.Allowed || d.Addr != "127.0.0.1:"+ap {
				t.Errorf("the allowed host's decision: %+v of %+v", d, decisions)
			}
			if d, ok := seen["denied.test:"+ap]; !ok || d.Allowed || !strings.Contains(d.Reason, "not on policy.box.local.egress.allow") {
				t.Errorf("the other host's decision: %+v of %+v", d, decisions)
			}
		})
	}
}

func portOfTest(u string) string {
	p, _ := url.Parse(u)
	return p.Port()
}

// The real pinned CLIs, behind the model proxy, do not see their own logins in the runner's home
// (codex's ~/.codex, Claude Code's ~/.claude and ~/.claude.json), nor the operator's git, GitHub
// CLI, netrc and SSH credentials: the jail hides them, and the session, which needs none of them,
// completes. The agent's shell read them before (attack23, attack24).
func TestPresetSessionsDoNotSeeTheCLIsLogin(t *testing.T) {
	for _, c := range []struct{ preset, model string }{{"codex", codexModel}, {"claude", ""}} {
		t.Run(c.preset, func(t *testing.T) {
			// A kubeconfig named in a list, and an SSH agent's folder under /tmp found by a glob.
			kubeconfig := filepath.Join(t.TempDir(), "kubeconfig.yaml")
			if err := os.WriteFile(kubeconfig, []byte("token: sk-LOGIN-kube\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			agentDir, err := os.MkdirTemp("/tmp", "ssh-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(agentDir) })
			if err := os.WriteFile(filepath.Join(agentDir, "agent.1"), []byte("sk-LOGIN-agent\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// An SSH agent's socket right in /tmp (ssh-agent -a, an editor's forwarded agent),
			// which signs for whoever connects (attack26).
			sock := filepath.Join("/tmp", fmt.Sprintf("autonomy-test-agent-%d-%s.sock", os.Getpid(), c.preset))
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					conn.Write([]byte("sk-LOGIN-sock\n"))
					conn.Close()
				}
			}()
			fake := modelfake.Start(
				modelfake.Turn{Shell: "cat ~/.codex/auth.json ~/.claude.json ~/.claude/.credentials.json ~/.git-credentials ~/.config/gh/hosts.yml ~/.netrc ~/.ssh/id_ed25519 " + kubeconfig + " " + agentDir + "/agent.1 2>&1; socat - UNIX-CONNECT:" + sock + " </dev/null 2>&1; echo probed"},
				finalResult("Probed the logins."))
			defer fake.Close()
			r, s := proxyRunFleet(t, c.preset, proxyFleet(c.preset, c.model), fake, func(r *Runner) {
				r.opts.Env = append(r.opts.Env, "KUBECONFIG=/nowhere/config"+string(os.PathListSeparator)+kubeconfig, "SSH_AUTH_SOCK="+sock)
				home := sessionenv.Lookup(r.opts.Env, "HOME")
				if c.preset == "claude" {
					// Claude Code's local install is in its login folder, ~/.claude/local: the
					// folder's credentials are hidden, the program is not (attack26: every
					// session failed, the CLI not found).
					program, err := lookPath(r.opts.Env, "claude")
					if err != nil {
						t.Fatal(err)
					}
					local := filepath.Join(home, ".claude", "local")
					if err := os.MkdirAll(local, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(local, "claude"), []byte("#!/bin/sh\nexec "+program+" \"$@\"\n"), 0o755); err != nil {
						t.Fatal(err)
					}
					r.opts.Env = sessionenv.With(r.opts.Env, "PATH="+local+string(os.PathListSeparator)+sessionenv.Lookup(r.opts.Env, "PATH"))
				}
				for path, body := range map[string]string{
					".codex/auth.json":          `{"OPENAI_API_KEY":"sk-LOGIN-codex"}`,
					".claude.json":              `{"primaryApiKey":"sk-LOGIN-claude"}`,
					".claude/.credentials.json": `{"claudeAiOauth":{"accessToken":"sk-LOGIN-oauth"}}`,
					".git-credentials":          "https://x:sk-LOGIN-git@github.com\n",
					".config/gh/hosts.yml":      "github.com:\n    oauth_token: sk-LOGIN-gh\n",
					".netrc":                    "machine github.com login x password sk-LOGIN-netrc\n",
					".ssh/id_ed25519":           "sk-LOGIN-ssh\n",
				} {
					path = filepath.Join(home, filepath.FromSlash(path))
					if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			})
			if s.Status != ir.Done || fake.Err() != nil {
				t.Fatalf("ended %s (%s); model: %v\n%s", s.Status, s.Reason, fake.Err(), sessionLogOf(r, s.ID))
			}
			scripted := fake.Scripted()
			if len(scripted) < 2 || len(scripted[1].ToolOutputs) == 0 {
				t.Fatalf("the shell's output never reached the model: %d scripted requests\n%s", len(scripted), sessionLogOf(r, s.ID))
			}
			out := scripted[1].ToolOutputs[len(scripted[1].ToolOutputs)-1]
			if strings.Contains(out, "sk-LOGIN") || !strings.Contains(out, "probed") {
				t.Errorf("the agent's shell read the CLI's login:\n%s", out)
			}
		})
	}
}
