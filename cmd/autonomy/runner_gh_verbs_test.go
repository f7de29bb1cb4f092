//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
)

// TestGitHubRunnerLogsFollow: logs -f of a run prints each job's log as the job completes and
// returns when the run has ended; without -f, a job still running is named with no log. Both
// through GitHub's workflow-jobs endpoints (the log is a redirect to plain text).
func TestGitHubRunnerLogsFollow(t *testing.T) {
	t.Parallel()
	dir, srv := ghCheckout(t, ghfake.Options{})
	operator := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1", "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + srv.URL, "GH_TOKEN=" + ghTestToken}
	id, err := srv.AddRun("develop.yml", "workflow_dispatch")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(id); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SetJob(id, "agent", "in_progress", "", ""); err != nil {
		t.Fatal(err)
	}
	run := strconv.FormatInt(id, 10)
	out, errOut, code := ghCLI(t, dir, operator, "runner", "--target", "gh-actions", "logs", run)
	if code != 0 || !strings.Contains(out, "== agent (in_progress)") {
		t.Fatalf("logs of a running job: exit %d: %s%s", code, out, errOut)
	}
	// The job and the run complete at the third look at the run (the first is the session's get,
	// the second logs' first look, which finds the job running): only a follow prints its log.
	var looks atomic.Int32
	srv.BeforeEach(func(method, path string) {
		if method == "GET" && strings.HasSuffix(path, "/actions/runs/"+run) && looks.Add(1) == 3 {
			if _, err := srv.SetJob(id, "agent", "completed", "success", "step 1\nthe agent's last line\n"); err != nil {
				t.Error(err)
			}
			if err := srv.Complete(id, "success"); err != nil {
				t.Error(err)
			}
		}
	})
	out, errOut, code = ghCLI(t, dir, operator, "runner", "--target", "gh-actions", "logs", run, "-f")
	if code != 0 || out != "== agent (success) ==\nstep 1\nthe agent's last line\n" {
		t.Fatalf("logs -f: exit %d:\n%q\n%s", code, out, errOut)
	}
	if looks.Load() < 3 {
		t.Errorf("logs -f returned after %d looks at the run, before it ended", looks.Load())
	}
	if _, errOut, code = ghCLI(t, dir, operator, "runner", "--target", "gh-actions", "logs", "12345"); code == 0 {
		t.Errorf("logs of an unknown run: exit 0: %s", errOut)
	}
}

var askTokenRe = regexp.MustCompile(`autonomy:ask actor=maintainer token=([0-9a-f]{32})`)

// engageAsk posts the maintainer's ask on a new item as its workflow's engage job does, and
// returns the item and the ask's token.
func engageAsk(t *testing.T, dir string, srv *ghfake.Server) (int, string) {
	t.Helper()
	n := srv.AddIssue("Ship it?", "")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1", "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + srv.URL, "GH_TOKEN=" + ghTestToken,
		"AUTONOMY_ACTOR=maintainer", "AUTONOMY_SUBJECT=" + strconv.Itoa(n), "AUTONOMY_ASK=approve the release",
		"AUTONOMY_POLICY=" + filepath.Join(dir, ".autonomy", "policy.json")}
	if out, errOut, code := ghCLI(t, dir, env, "gh", "engage"); code != 0 {
		t.Fatalf("gh engage: exit %d: %s%s", code, out, errOut)
	}
	is, _ := srv.Issue(n)
	for _, c := range is.Comments {
		if m := askTokenRe.FindStringSubmatch(c); m != nil {
			return n, m[1]
		}
	}
	t.Fatalf("no ask on #%d: %q", n, is.Comments)
	return 0, ""
}

// TestGitHubRunnerAskVerbs: on gh-actions, cancel ask:TOKEN retracts an open ask (it leaves
// list, and a maintainer's later command cannot resolve it); update ask:TOKEN --token T
// --evidence COMMENT resolves one as the maintainer's command there records it, refusing a wrong
// token, a comment that does not say the token, and an outsider's.
func TestGitHubRunnerAskVerbs(t *testing.T) {
	t.Parallel()
	dir, srv := ghCheckout(t, ghfake.Options{Collaborators: map[string]string{"ada": "admin", "eve": "read"}})
	operator := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), cliEnv + "=1", "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + srv.URL, "GH_TOKEN=" + ghTestToken,
		"AUTONOMY_POLICY=" + filepath.Join(dir, ".autonomy", "policy.json")}
	gh := func(args ...string) (string, string, int) {
		return ghCLI(t, dir, operator, append([]string{"runner", "--target", "gh-actions"}, args...)...)
	}

	// cancel retracts.
	n, token := engageAsk(t, dir, srv)
	if out, errOut, code := gh("list"); code != 0 || !strings.Contains(out, "ask:"+token) {
		t.Fatalf("list before cancel: exit %d: %s%s", code, out, errOut)
	}
	if out, errOut, code := gh("cancel", "ask:"+token); code != 0 || strings.TrimSpace(out) != "ask:"+token+" cancelled" {
		t.Fatalf("cancel ask: exit %d: %s%s", code, out, errOut)
	}
	if out, _, _ := gh("list"); strings.Contains(out, token) {
		t.Errorf("list after cancel still shows the ask:\n%s", out)
	}
	c, _ := srv.AddComment(n, "ada", "/agent approve "+token)
	if _, errOut, code := gh("update", "ask:"+token, "--token", token, "--evidence", strconv.FormatInt(c, 10)); code != 1 {
		t.Errorf("update of a retracted ask: exit %d, want 1: %s", code, errOut)
	}
	if _, errOut, code := gh("cancel", "ask:"+token); code != 1 {
		t.Errorf("a second cancel: exit %d, want 1: %s", code, errOut)
	}

	// update resolves, with the token and the maintainer's command as evidence.
	n, token = engageAsk(t, dir, srv)
	other, _ := srv.AddComment(n, "ada", "/agent approve 0123456789abcdef0123456789abcdef")
	outsider, _ := srv.AddComment(n, "eve", "/agent approve "+token)
	good, _ := srv.AddComment(n, "ada", "/agent approve "+token+" checked the preview")
	for _, c := range []struct {
		token    string
		evidence int64
		want     string
	}{
		{"0123456789abcdef0123456789abcdef", good, "not this ask's"},
		{token, other, "not a command resolving this ask"},
		{token, outsider, "not a maintainer"},
	} {
		if _, errOut, code := gh("update", "ask:"+token, "--token", c.token, "--evidence", strconv.FormatInt(c.evidence, 10)); code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("update with token %s, evidence %d: exit %d, want 1 and %q: %s", c.token, c.evidence, code, c.want, errOut)
		}
	}
	url := srv.URL + "o/r/issues/" + strconv.Itoa(n) + "#issuecomment-" + strconv.FormatInt(good, 10)
	if out, errOut, code := gh("update", "ask:"+token, "--token", token, "--evidence", url, "--status", "done"); code != 0 || strings.TrimSpace(out) != "ask:"+token+" done" {
		t.Fatalf("update: exit %d: %s%s", code, out, errOut)
	}
	is, _ := srv.Issue(n)
	if last := is.Comments[len(is.Comments)-1]; !strings.Contains(last, "autonomy:resolution token="+token+" verb=approve by=ada") {
		t.Errorf("the resolution recorded: %q", last)
	}
	if out, _, _ := gh("list"); strings.Contains(out, token) {
		t.Errorf("list after the resolution still shows the ask:\n%s", out)
	}
}
