package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/runtimes"
	"github.com/autonomyhq/autonomy/substrates"
)

// fleet is a test profile: its ir.yml and the files it names (scripts are made executable).
type fleet struct {
	yml   string
	files map[string]string
}

// installFleet compiles f for local into a fresh directory and returns the installation root.
// With git, the root is a git repository with one commit, for isolated workspaces.
func installFleet(t testing.TB, f fleet, git bool) string {
	t.Helper()
	prof := filepath.Join(t.TempDir(), "profile")
	write := func(name, content string, mode os.FileMode) {
		full := filepath.Join(prof, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("ir.yml", f.yml, 0o644)
	for name, content := range f.files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		write(name, content, mode)
	}
	p, diags, err := ir.Check(prof)
	if err != nil || diags.HasErrors() {
		t.Fatalf("profile: %v\n%s", err, diags)
	}
	dir := filepath.Join(t.TempDir(), "install")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if git {
		gitRun(t, dir, "init", "-q", "-b", "main")
		gitRun(t, dir, "config", "user.email", "test@example.com")
		gitRun(t, dir, "config", "user.name", "test")
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte("repo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitRun(t, dir, "add", "README")
		gitRun(t, dir, "commit", "-q", "-m", "init")
	}
	out, err := substrates.Compile(Substrate{}, resolve(p), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := substrates.Write(dir, &out, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(s string) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// newRunner opens an in-process runner whose timeouts count in tenths of a second, hosting the
// playbook runtimes as the autonomy command's does (runtimes.Host) unless opts names a host.
func newRunner(t testing.TB, dir string, opts Options) *Runner {
	t.Helper()
	if opts.Playbooks == nil {
		opts.Playbooks = runtimes.Host{}
	}
	// The tests' stand-in agent CLIs run with no model key: they reach no model. A test of what
	// a launch without a key does names LoginEnv itself (LoginEnv= for the default, a refusal).
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if !slices.ContainsFunc(opts.Env, func(kv string) bool { return strings.HasPrefix(kv, LoginEnv+"=") }) {
		opts.Env = append(slices.Clip(opts.Env), LoginEnv+"=1")
	}
	r, err := New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.minute = 100 * time.Millisecond
	t.Cleanup(func() { r.Close() })
	return r
}

// waitEnded waits until a session ends and returns it.
func waitEnded(t testing.TB, r *Runner, id string) store.Session {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s, ok, err := r.Store.Get(context.Background(), id)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", id, ok, err)
		}
		if s.Status.Ended() {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session %s did not end", id)
	return store.Session{}
}

func launch(t testing.TB, r *Runner, req LaunchRequest) store.Session {
	t.Helper()
	res, err := r.Launch(context.Background(), req)
	if err != nil {
		t.Fatalf("launch %s: %v", req.Actor, err)
	}
	return res.Session
}

// readFile is the content of path; a failure fails the test.
func readFile(t testing.TB, path string) string { t.Helper(); return testfs.ReadString(t, path) }

// scriptDone is the line a test's shell script ends with to deliver a valid result of the
// default contract (autonomy.result.v1): a script's session, too, is done only with one.
const scriptDone = `printf '{"status":"done","summary":"ok"}\n' > "$AUTONOMY_RESULT"` + "\n"

// deliverResult is the shell line a test's box agent ends with to deliver a valid result of the
// default contract (autonomy.result.v1), as a model session does through submit_result: a
// session is done only with one.
var deliverResult = func() string {
	p, err := filepath.Abs("testdata/result-done.json")
	if err != nil {
		panic(err)
	}
	return `cp ` + p + ` "$AUTONOMY_RESULT"`
}()

// restamped is an installed JSON file's bytes edited by edit, its DO NOT EDIT header made again
// for the new body: what an agent that knows the format writes, which the runner cannot tell
// from what autonomy installed (the guard puts it back).
func restamped(t testing.TB, installed []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	lines := bytes.SplitAfterN(installed, []byte("\n"), 3)
	if len(lines) != 3 || !bytes.HasPrefix(lines[1], []byte(`  "//": `)) {
		t.Fatalf("not an installed JSON file:\n%s", installed)
	}
	body := edit(append(append([]byte{}, lines[0]...), lines[2]...))
	sum := sha256.Sum256(body)
	header := regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAll(lines[1], []byte(hex.EncodeToString(sum[:])))
	rest := bytes.TrimPrefix(body, []byte("{\n"))
	return append(append([]byte("{\n"), header...), rest...)
}

// parkedSteps records a step playbook session of actor parked for an answer with token, as its
// run leaves it (its pause, its checkpoint), and returns it.
func parkedSteps(t testing.TB, r *Runner, actor, token string) store.Session {
	t.Helper()
	ctx := context.Background()
	hash := playproto.HashToken(token)
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: actor, Kind: "agent", Status: ir.Paused, Origin: "operator", TokenHash: hash,
			Reason: inputRequired + "which one?", StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.Store.SavePause(ctx, hash, s.ID, []byte(`{"next": 0}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Store.PutState(ctx, playproto.SessionKey(s.ID), s.ID, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	return s
}

// supervised records a running session of actor, as a launch does, starts its supervisor, and
// returns it once it ended.
func supervised(t testing.TB, r *Runner, actor string) store.Session {
	t.Helper()
	ctx := context.Background()
	var s store.Session
	if err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: actor, Kind: "agent", Status: ir.Running, Origin: "operator", CreatedAt: time.Now()}
		return tx.Insert(&s)
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.start(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := waitEnded(t, r, s.ID)
	r.Wait()
	return got
}
