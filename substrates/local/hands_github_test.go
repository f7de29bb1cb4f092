//go:build unix

package local

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/ghevent"
	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/autonomyhq/autonomy/internal/store"
)

// ghHandsFleet: on codeHost github, talker holds tasks:converse and tasks:author, mute nothing;
// both dump their environment and wait for a file, so their sessions stay in flight while the
// test calls their tools.
var ghHandsFleet = fleet{yml: `schema: autonomy.ir.v1
targets: [local]
codeHost: github
actors:
  mute:
    behavior: scripts/wait.sh
    triggers: [{ dispatch: true }]
  talker:
    behavior: scripts/wait.sh
    capabilities: [tasks:converse, tasks:author]
    triggers: [{ dispatch: true }]
policy:
  box:
    taskStates: { ready: "status: ready" }
    local: { tools: { max: { comment: 4 } } }
`, files: map[string]string{"scripts/wait.sh": "#!/bin/sh\nenv > \"$AUTONOMY_DIR/env-$AUTONOMY_SESSION\"\n" +
	"while [ ! -e \"$AUTONOMY_DIR/done\" ]; do sleep 0.05; done\n"}}

// ghSecret is the runner's token in the tests: it must land nowhere a session or a log reaches.
// It is made at run time, so the test binary (which the runner copies into its state) holds none.
var ghSecret = "ghp_" + strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.Itoa(os.Getpid())

// ghRunner opens a runner whose environment holds the token, the API of gh and its repository,
// as the operator's shell would.
func ghRunner(t *testing.T, dir string, gh *ghfake.Server, opts Options) *Runner {
	t.Helper()
	opts.Env = append(os.Environ(), "GH_TOKEN="+ghSecret, "GITHUB_API_URL="+gh.URL, "GITHUB_REPOSITORY=acme/app", "GITHUB_SERVER_URL="+gh.URL)
	return newRunner(t, dir, opts)
}

// newIssueFake is a GitHub fake of acme/app with one issue, which takes the runner's token.
func newIssueFake(t *testing.T) (*ghfake.Server, int) {
	t.Helper()
	gh, err := ghfake.New(ghfake.Options{Owner: "acme", Repo: "app", Token: ghSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	return gh, gh.AddIssue("a bug", "")
}

// TestGitHubToolsLandWithTheRunnersToken: on codeHost github, a session's comment, create_item
// and set_state are applied on GitHub by its supervisor with the runner's token, after the
// capability and cap checks; GitHub's refusal and a rate limit come back as tool errors the model
// reads, and what is refused lands nothing. The token is in no session's environment, log or
// state file.
func TestGitHubToolsLandWithTheRunnersToken(t *testing.T) {
	gh, issue := newIssueFake(t)
	dir := installFleet(t, ghHandsFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	mute := launch(t, r, LaunchRequest{Actor: "mute"})
	talker := launch(t, r, LaunchRequest{Actor: "talker"})
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
		waitEnded(t, r, mute.ID)
		waitEnded(t, r, talker.ID)
	}()

	cs := sessionTools(t, dir, talker.ID)
	if out, isErr := callTool(t, cs, "comment", `{"item":"#1","body":"Found it."}`); isErr || !strings.Contains(out, "commented on #1") {
		t.Fatalf("talker's comment: %s", out)
	}
	if out, isErr := callTool(t, cs, "set_state", `{"item":"1","state":"ready"}`); isErr || !strings.Contains(out, "moved #1 to ready") {
		t.Fatalf("talker's set_state: %s", out)
	}
	if out, isErr := callTool(t, cs, "create_item", `{"title":"Follow-up","body":"More.","labels":["bug"]}`); isErr || !strings.Contains(out, "created #2") {
		t.Fatalf("talker's create_item: %s", out)
	}
	if out, isErr := callTool(t, cs, "comment", `{"item":"99","body":"Lost."}`); !isErr || !strings.Contains(out, "GitHub refused it") || !strings.Contains(out, "404") {
		t.Errorf("a comment on a missing issue: %q, want GitHub's refusal", out)
	}
	gh.RateLimitNext(1, ghfake.Primary, 10*time.Minute)
	if out, isErr := callTool(t, cs, "comment", `{"item":"1","body":"Limited."}`); !isErr || !strings.Contains(out, "rate limit") {
		t.Errorf("a comment under a rate limit: %q", out)
	}
	sent := len(gh.Requests())
	if out, isErr := callTool(t, cs, "comment", `{"item":"1","body":"Still limited."}`); !isErr || !strings.Contains(out, "nothing was sent") {
		t.Errorf("a comment while the limit holds: %q", out)
	}
	if n := len(gh.Requests()); n != sent {
		t.Errorf("%d requests went out while the rate limit held", n-sent)
	}
	if out, isErr := callTool(t, cs, "comment", `{"item":"1","body":"Past the cap."}`); !isErr || !strings.Contains(out, "already used its 4 comment call") {
		t.Errorf("a fifth comment past tools.max.comment: 4: %q", out)
	}
	if out, isErr := callTool(t, sessionTools(t, dir, mute.ID), "comment", `{"item":"1","body":"Mute."}`); !isErr {
		t.Errorf("mute's comment: %s", out)
	}

	is, _ := gh.Issue(issue)
	if !slices.Equal(is.Comments, []string{"Found it."}) {
		t.Errorf("comments on #1: %q, want only the talker's first", is.Comments)
	}
	if !slices.Contains(is.Labels, "status: ready") {
		t.Errorf("labels of #1: %q, want the ready state's label", is.Labels)
	}
	if is2, ok := gh.Issue(2); !ok || is2.Title != "Follow-up" || !slices.Contains(is2.Labels, "bug") {
		t.Errorf("created issue: %+v", is2)
	}
	_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
	waitEnded(t, r, talker.ID)
	waitEnded(t, r, mute.ID)
	assertNoSecret(t, dir, ghSecret, true)
}

// assertNoSecret fails when any file under dir (the installation: the sessions' environments
// their scripts dumped, their logs, transcripts and the runner's database) holds secret; with
// dumps, when no session dumped its environment there.
func assertNoSecret(t *testing.T, dir, secret string, dumps bool) {
	t.Helper()
	envs := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), "env-") {
			envs++
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the runner's token", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if dumps && envs == 0 {
		t.Error("no session dumped its environment: the scan proves nothing")
	}
}

// TestGitHubEffectsAreCheckedByTheSupervisor: the supervisor checks each effect again: a row
// forged into the store for an actor without tasks:converse (what a shell that writes the
// database could do) lands nothing; and a runner started without a token refuses the tools in
// words the model reads, sending nothing.
func TestGitHubEffectsAreCheckedByTheSupervisor(t *testing.T) {
	gh, issue := newIssueFake(t)
	dir := installFleet(t, ghHandsFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	mute := launch(t, r, LaunchRequest{Actor: "mute"})
	seq, err := (&caller{store: r.Store, session: mute, max: map[string]int{}}).spendSeq(t.Context(), "comment", `{"item":"1","body":"Forged."}`)
	if err != nil {
		t.Fatal(err)
	}
	o, err := newRunner(t, dir, Options{Session: mute.ID}).awaitEffect(t.Context(), seq, time.Minute)
	if err != nil || !strings.Contains(o.Refused, "needs the capability tasks:converse") {
		t.Errorf("a forged comment of mute: %+v, %v", o, err)
	}
	_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
	waitEnded(t, r, mute.ID)
	_ = os.Remove(filepath.Join(dir, "done"))

	bare := newRunner(t, dir, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}})
	talker := launch(t, bare, LaunchRequest{Actor: "talker"})
	out, isErr := callTool(t, sessionTools(t, dir, talker.ID), "comment", `{"item":"1","body":"No token."}`)
	if !isErr || !strings.Contains(out, "holds no GitHub token") {
		t.Errorf("a comment with no token: %q", out)
	}
	_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
	waitEnded(t, bare, talker.ID)
	if is, _ := gh.Issue(issue); len(is.Comments) > 0 {
		t.Errorf("comments landed: %q", is.Comments)
	}
}

// TestGitHubCapsSurviveASupervisorRestart: a supervisor that takes over a session's effects (a
// restarted one) counts those an earlier one took against the caps: of five comments forged into
// the store under tools.max.comment: 4, two applied by a first applier, a second applies two
// more and refuses the fifth.
func TestGitHubCapsSurviveASupervisorRestart(t *testing.T) {
	gh, issue := newIssueFake(t)
	dir := installFleet(t, ghHandsFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	talker := launch(t, r, LaunchRequest{Actor: "talker"})
	_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
	talker = waitEnded(t, r, talker.ID) // its own supervisor applies nothing more
	forge := func(n int) (seqs []int64) {
		for i := 0; i < n; i++ {
			err := r.Store.Tx(t.Context(), func(tx *store.Tx) error {
				seq, err := tx.LogSeq(store.Event{Session: talker.ID, Actor: "talker", Kind: toolEvent("comment"), Message: `{"item":"1","body":"Forged ` + strconv.Itoa(len(seqs)) + `."}`})
				seqs = append(seqs, seq)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return seqs
	}
	forge(2)
	r.newGitHubApplier(talker).applyPending(t.Context())
	last := forge(3)
	r.newGitHubApplier(talker).applyPending(t.Context())
	o, err := r.awaitEffect(t.Context(), last[2], time.Second)
	if err != nil || !strings.Contains(o.Refused, "already used its 4 comment call") {
		t.Errorf("the fifth comment: %+v, %v", o, err)
	}
	if is, _ := gh.Issue(issue); len(is.Comments) != 4 {
		t.Errorf("%d comments landed, want 4: %q", len(is.Comments), is.Comments)
	}
}

// A session's comment that holds an /agent command is refused, not posted with the operator's
// token: the control workflow of gh-actions would obey "/agent approve TOKEN" from the operator
// (a maintainer) as the resolution of an ask, and the local event source "/agent ACTOR" as the
// operator's launch. The model reads why; a mention inside a sentence is posted.
func TestSessionCommentIsNoOperatorCommand(t *testing.T) {
	gh, issue := newIssueFake(t)
	dir := installFleet(t, ghHandsFleet, false)
	r := ghRunner(t, dir, gh, Options{})
	talker := launch(t, r, LaunchRequest{Actor: "talker"})
	defer func() { _ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); waitEnded(t, r, talker.ID) }()
	cs := sessionTools(t, dir, talker.ID)
	for _, body := range []string{"/agent approve 0123456789abcdef0123456789abcdef", "/Agent reviewer approve #1 now", "Done.\\n  /agent retry 7"} {
		if out, isErr := callTool(t, cs, "comment", `{"item":"1","body":"`+body+`"}`); !isErr || !strings.Contains(out, "starts with /agent") {
			t.Errorf("the session's comment %q: %s; want it refused, saying why", body, out)
		}
	}
	if out, isErr := callTool(t, cs, "comment", `{"item":"1","body":"Resolve it with /agent approve and the token."}`); isErr {
		t.Errorf("a comment mentioning /agent mid-sentence: %s", out)
	}
	is, _ := gh.Issue(issue)
	for _, c := range is.Comments {
		if n, _ := ghevent.CommandLine(c); n > 0 {
			t.Errorf("on GitHub, as the operator: %q", c)
		}
	}
	if len(is.Comments) != 1 {
		t.Errorf("comments on #%d: %q, want the mention only", issue, is.Comments)
	}
}
