//go:build unix

package local

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/proc"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

const envProbe = `#!/bin/sh
# Reports the env contract it was started with.
out="$AUTONOMY_DIR/probe-$AUTONOMY_SESSION.env"
{
  printf 'ISSUE=%s\n' "$ISSUE"
  printf 'BODY=%s\n' "$BODY"
  printf 'WHO=%s\n' "$WHO"
  printf 'ROLE=%s\n' "$ROLE"
  printf 'AGENT=%s\n' "$AUTONOMY_AGENT"
  printf 'CAPS=%s\n' "$AUTONOMY_CAPABILITIES"
  printf 'FORWARD=%s\n' "$AUTONOMY_FORWARD"
  printf 'PWD=%s\n' "$(pwd)"
  printf 'STRAY=%s\n' "$AUTONOMY_STRAY"
} > "$out"
`

var probeFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  probe:
    behavior: scripts/probe.sh
    capabilities: [tasks:converse, agent:list]
    triggers:
      - dispatch: true
        params: { ISSUE: subject.ref, BODY: subject.text, WHO: subject.actor, ROLE: subject.actorRole }
  fail:
    behavior: scripts/fail.sh
    capabilities: []
    triggers: [{ dispatch: true }]
  judged:
    behavior: scripts/judged.sh
    triggers: [{ dispatch: true, params: { MODE: subject.text } }]
    result:
      schema:
        type: object
        required: [verdict]
        properties: { verdict: { enum: [approve, reject] } }
`,
	files: map[string]string{
		"scripts/probe.sh": envProbe + scriptDone,
		"scripts/fail.sh":  "#!/bin/sh\necho failing >&2\nexit 3\n",
		"scripts/judged.sh": `#!/bin/sh
case "$MODE" in
  good) echo '{"verdict":"approve"}' > "$AUTONOMY_RESULT" ;;
  bad) echo '{"verdict":"maybe"}' > "$AUTONOMY_RESULT" ;;
  huge) echo '{"verdict":"approve","pr":1e99999999}' > "$AUTONOMY_RESULT" ;;
esac
`,
	},
}

func TestLaunchEnvContract(t *testing.T) {
	dir := installFleet(t, probeFleet, false)
	t.Setenv("AUTONOMY_STRAY", "must not leak")
	r := newRunner(t, dir, Options{Env: append(os.Environ(), "AUTONOMY_STRAY=must not leak")})
	hostile := "line one\nline two `uname` $(id) ${{ github.event.issue.title }} \"quoted\" 'single'"
	s := launch(t, r, LaunchRequest{Actor: "probe", Ref: "42", Text: hostile})
	if s.Status != ir.Running || s.ID == "" {
		t.Fatalf("launch returned %+v", s)
	}
	got := waitEnded(t, r, s.ID)
	if got.Status != ir.Done || !strings.Contains(got.Verified, "exit status 0") || !strings.HasSuffix(got.Verified, "autonomy.result.v1; its summary: ok") {
		t.Fatalf("status %s, verified %q (want it to end with the result's summary), reason %q", got.Status, got.Verified, got.Reason)
	}
	if got.Params["BODY"] != hostile || got.Params["ISSUE"] != "42" || got.Params["ROLE"] != "OWNER" {
		t.Fatalf("params not stored verbatim: %#v", got.Params)
	}
	env := readFile(t, filepath.Join(dir, "probe-"+s.ID+".env"))
	for _, want := range []string{"ISSUE=42\n", "BODY=" + hostile + "\n", "ROLE=OWNER\n", "AGENT=probe\n", "CAPS=tasks:converse agent:list\n", "PWD=" + dir + "\n", "STRAY=\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	var forward map[string]string
	line := env[strings.Index(env, "FORWARD=")+len("FORWARD="):]
	line = line[:strings.Index(line, "\nPWD=")]
	if err := json.Unmarshal([]byte(line), &forward); err != nil || forward["BODY"] != hostile {
		t.Fatalf("AUTONOMY_FORWARD = %q: %v", line, err)
	}
}

func TestExitStatusAndResult(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	cases := []struct {
		actor, mode string
		status      ir.SessionStatus
		reason      string
	}{
		{"fail", "", ir.Failed, "exit status 3"},
		{"judged", "good", ir.Done, ""},
		{"judged", "bad", ir.Failed, `does not satisfy .autonomy/results/judged.json: at /verdict: value must be one of "approve", "reject" (got "maybe")`},
		{"judged", "none", ir.Failed, "no result"},
		{"judged", "huge", ir.Failed, "exit status 0 but the result cannot be checked: the number 1e99999999 (at byte 27) is too large to check exactly"},
	}
	for _, c := range cases {
		s := launch(t, r, LaunchRequest{Actor: c.actor, Text: c.mode})
		got := waitEnded(t, r, s.ID)
		if got.Status != c.status || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("%s %s: %s %q, want %s %q", c.actor, c.mode, got.Status, got.Reason, c.status, c.reason)
		}
		if c.status == ir.Done && !strings.Contains(got.Verified, "validates against") {
			t.Errorf("%s: done without saying how it was verified: %q", c.actor, got.Verified)
		}
		if c.actor == "fail" && !strings.Contains(readFile(t, got.LogPath), "failing") {
			t.Errorf("the log lacks the process's stderr")
		}
	}
}

func TestUnknownParamAndActor(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	var refused *RefusedError
	if _, err := r.Launch(context.Background(), LaunchRequest{Actor: "probe", Params: map[string]string{"ISUE": "1"}}); !errors.As(err, &refused) || !strings.Contains(err.Error(), `did you mean "ISSUE"`) {
		t.Errorf("unknown param: %v", err)
	}
	if _, err := r.Launch(context.Background(), LaunchRequest{Actor: "nobody"}); !errors.As(err, &refused) {
		t.Errorf("unknown actor: %v", err)
	}
	if _, err := r.Launch(context.Background(), LaunchRequest{Actor: "../../etc"}); err == nil {
		t.Errorf("a path as actor name was accepted")
	}
	ss, _ := r.Store.List(context.Background(), store.ListOptions{All: true})
	if len(ss) != 0 {
		t.Errorf("refused launches left %d sessions", len(ss))
	}
}

var treeFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  tree:
    behavior: scripts/tree.sh
    triggers: [{ dispatch: true }]
    timeout: 5
policy:
  box:
    local: { graceSeconds: 1 }
`,
	files: map[string]string{"scripts/tree.sh": `#!/bin/sh
# A child that spawns a grandchild; everyone ignores TERM.
trap '' TERM
sh -c 'trap "" TERM; sleep 300 & echo $! >> "$AUTONOMY_DIR/pids-$AUTONOMY_SESSION"; sleep 300' &
echo $! >> "$AUTONOMY_DIR/pids-$AUTONOMY_SESSION"
echo $$ >> "$AUTONOMY_DIR/pids-$AUTONOMY_SESSION"
wait
` + scriptDone},
}

// quickGrace is the grace period of the tests that stop a tree (which ignores TERM) without
// asserting how long the grace period is: the KILL comes this long after the TERM.
const quickGrace = 50 * time.Millisecond

// pidsOf reads the pids a tree session wrote, once all three are there.
func pidsOf(t *testing.T, dir, id string) []int {
	t.Helper()
	for i := 0; i < 500; i++ {
		data, _ := os.ReadFile(filepath.Join(dir, "pids-"+id))
		fields := strings.Fields(string(data))
		if len(fields) == 3 {
			var pids []int
			for _, f := range fields {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the tree never started")
	return nil
}

func alive(pid int) bool {
	start, err := proc.StartTime(pid)
	return err == nil && proc.Alive(pid, start)
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{Grace: quickGrace})
	s := launch(t, r, LaunchRequest{Actor: "tree"})
	pids := pidsOf(t, dir, s.ID)
	got := waitEnded(t, r, s.ID)
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "timed out") {
		t.Fatalf("%s %q", got.Status, got.Reason)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d survived the timeout", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestCancelKillsTheWholeTree(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{Grace: quickGrace})
	s := launch(t, r, LaunchRequest{Actor: "tree"})
	pids := pidsOf(t, dir, s.ID)
	ok, err := r.Cancel(context.Background(), s.ID)
	if err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	got := waitEnded(t, r, s.ID)
	r.Wait()
	if got.Status != ir.Cancelled {
		t.Fatalf("status %s, want cancelled", got.Status)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d survived cancel", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if again, err := r.Cancel(context.Background(), s.ID); again || err != nil {
		t.Errorf("second cancel: %v %v, want false", again, err)
	}
	if got, _, _ := r.Store.Get(context.Background(), s.ID); got.Status != ir.Cancelled {
		t.Errorf("the supervisor overwrote cancelled with %s", got.Status)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, treeFleet, false)
	r := newRunner(t, dir, Options{Grace: quickGrace})
	s := launch(t, r, LaunchRequest{Actor: "tree"})
	pidsOf(t, dir, s.ID)
	ctx := context.Background()
	if n, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Paused}); err != nil || n.Status != ir.Paused {
		t.Fatalf("pause: %v %v", n.Status, err)
	}
	if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Paused}); err == nil {
		t.Errorf("pausing a paused session was accepted")
	}
	if n, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Running}); err != nil || n.Status != ir.Running {
		t.Fatalf("resume: %v %v", n.Status, err)
	}
	if _, err := r.Update(ctx, s.ID, ir.Patch{Status: ir.Done}); err == nil {
		t.Errorf("an agent session was marked done by update")
	}
	r.Cancel(ctx, s.ID)
	waitEnded(t, r, s.ID)
}

func TestOrphanIsFound(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, probeFleet, false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()
	// A session whose supervisor and process are both gone: a short-lived process, reaped.
	dead := deadProcess(t)
	var s store.Session
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "probe", Kind: "agent", Status: ir.Running, Origin: "operator", PID: dead.pid, PIDStart: dead.start,
			SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := r.List(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("the orphan is still listed as in flight: %+v", list)
	}
	got, _, _ := r.Store.Get(ctx, s.ID)
	if got.Status != ir.Failed || !strings.Contains(got.Reason, "no runner was watching") {
		t.Fatalf("orphan: %s %q", got.Status, got.Reason)
	}
}

type deadPID struct {
	pid   int
	start uint64
}

func deadProcess(t *testing.T) deadPID {
	t.Helper()
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "sleep 0.05"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	start, err := proc.StartTime(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return deadPID{p.Pid, start}
}

var wsFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  iso:
    behavior: scripts/commit.sh
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
  shared:
    behavior: scripts/commit.sh
    triggers: [{ dispatch: true }]
  dirty:
    behavior: scripts/dirty.sh
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
`,
	files: map[string]string{
		"scripts/commit.sh": `#!/bin/sh
set -e
pwd > "$AUTONOMY_DIR/pwd-$AUTONOMY_SESSION"
git rev-parse --abbrev-ref HEAD > "$AUTONOMY_DIR/head-$AUTONOMY_SESSION"
if [ "$(pwd)" != "$AUTONOMY_DIR" ]; then
  echo "$AUTONOMY_SESSION" > work.txt
  git add work.txt
  git commit -q -m "work of $AUTONOMY_SESSION"
fi
` + scriptDone,
		"scripts/dirty.sh": "#!/bin/sh\necho unsaved > notes.txt\n" + scriptDone,
	},
}

// waitGone waits until path no longer exists.
func waitGone(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return
		}
	}
	t.Fatalf("%s was not removed", path)
}

// TestWorkspaces: an isolated actor runs in its own worktree under .autonomy/worktrees, which is
// removed when it ends with its commits kept on a branch; --branch runs on that branch; a shared
// actor runs in the installation root; uncommitted work is never deleted.
func TestWorkspaces(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, wsFleet, true)
	r := newRunner(t, dir, Options{Env: append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")})
	root, _ := filepath.EvalSymlinks(dir)

	// isolated, detached: the commit is saved as autonomy/iso/<id>.
	s := launch(t, r, LaunchRequest{Actor: "iso"})
	wt := filepath.Join(dir, ".autonomy", "worktrees", s.ID)
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done || !got.Worktree {
		t.Fatalf("iso: %+v", got)
	}
	waitGone(t, wt)
	if pwd := strings.TrimSpace(readFile(t, filepath.Join(dir, "pwd-"+s.ID))); pwd != filepath.Join(root, ".autonomy", "worktrees", s.ID) {
		t.Errorf("iso ran in %s", pwd)
	}
	if msg := gitRun(t, dir, "log", "-1", "--format=%s", "autonomy/iso/"+s.ID); msg != "work of "+s.ID {
		t.Errorf("saved branch holds %q", msg)
	}
	if head := gitRun(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); head != "main" {
		t.Errorf("the installation's checkout moved to %s", head)
	}

	// --branch: a shared actor too gets a worktree, on that branch, and the branch keeps the work.
	s = launch(t, r, LaunchRequest{Actor: "shared", Branch: "feature/x"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("branch: %+v", got)
	}
	waitGone(t, filepath.Join(dir, ".autonomy", "worktrees", s.ID))
	if head := strings.TrimSpace(readFile(t, filepath.Join(dir, "head-"+s.ID))); head != "feature/x" {
		t.Errorf("--branch ran on %s", head)
	}
	if msg := gitRun(t, dir, "log", "-1", "--format=%s", "feature/x"); msg != "work of "+s.ID {
		t.Errorf("feature/x holds %q", msg)
	}

	// shared: the installation root, no worktree.
	s = launch(t, r, LaunchRequest{Actor: "shared"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done || got.Worktree {
		t.Fatalf("shared: %+v", got)
	}
	if pwd := strings.TrimSpace(readFile(t, filepath.Join(dir, "pwd-"+s.ID))); pwd != root {
		t.Errorf("shared ran in %s, want %s", pwd, root)
	}

	// Uncommitted work is kept, and the log says where.
	s = launch(t, r, LaunchRequest{Actor: "dirty"})
	waitEnded(t, r, s.ID)
	wt = filepath.Join(dir, ".autonomy", "worktrees", s.ID)
	var note string
	for deadline := time.Now().Add(30 * time.Second); note == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		evs, _ := r.Store.Events(context.Background(), s.ID, 0)
		for _, e := range evs {
			if e.Kind == "worktree" {
				note = e.Message
			}
		}
	}
	if !strings.Contains(note, "uncommitted") || readFile(t, filepath.Join(wt, "notes.txt")) != "unsaved\n" {
		t.Errorf("dirty worktree: note %q", note)
	}

	// A bad branch name is refused at launch, nothing recorded.
	if _, err := r.Launch(context.Background(), LaunchRequest{Actor: "shared", Branch: "-x..y"}); err == nil {
		t.Errorf("a bad branch name was accepted")
	}
}
