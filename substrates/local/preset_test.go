package local

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// skillFleet runs skills with a preset; its develop works in an isolated worktree and its
// reviewer returns a result.
func skillFleet(preset string) fleet {
	return fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  develop:
    behavior: skills/develop
    capabilities: [code:propose]
    triggers: [{ dispatch: true, params: { ISSUE: subject.ref } }]
    execution: { workspace: isolated }
  reviewer:
    behavior: skills/reviewer
    capabilities: [code:review]
    triggers: [{ dispatch: true }, { cron: "0 * * * *" }]
    result: { schema: autonomy.review.v1 }
policy:
  box:
    local: { agent: ` + preset + ` }
resources: [docs/guide.md]
`,
		files: map[string]string{
			"skills/develop/SKILL.md":  "# develop\nImplement $ISSUE.\n",
			"skills/reviewer/SKILL.md": "# reviewer\nJudge.\n",
			"docs/guide.md":            "the guide\n",
		},
	}
}

// fakeCodex is a stand-in for the codex program: it checks what the runner gives a codex
// session and does what the real one does with it (-o writes the last message).
const fakeCodex = `#!/bin/sh
set -e
log="$AUTONOMY_DIR/fake-$AUTONOMY_SESSION.txt"
printf 'argv=%s\n' "$*" > "$log"
printf 'behavior=%s\n' "$AUTONOMY_BEHAVIOR" >> "$log"
printf 'schema=%s\n' "$AUTONOMY_RESULT_SCHEMA" >> "$log"
printf 'pwd=%s\n' "$(pwd)" >> "$log"
printf 'tmpdir=%s\n' "$TMPDIR" >> "$log"
[ -d "$TMPDIR" ] && echo tmpdir-exists >> "$log"
[ -f "$AUTONOMY_BEHAVIOR" ] && echo behavior-readable >> "$log"
[ -f .autonomy/skills/develop/SKILL.md ] && echo skill-in-workspace >> "$log"
[ -f docs/guide.md ] && echo resource-in-workspace >> "$log"
stdin="$(cat)"
printf 'stdin=%s\n' "$stdin" >> "$log"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --output-last-message) out="$2"; shift ;;
    --add-dir) printf 'add-dir=%s\n' "$2" >> "$log"; shift ;;
  esac
  shift
done
if [ "${AUTONOMY_RESULT_SCHEMA%autonomy.review.v1.json}" != "$AUTONOMY_RESULT_SCHEMA" ]; then
  echo '{"verdict":"approve","summary":"fine","headSha":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}' > "$out"
else
  echo '{"status":"done","summary":"implemented"}' > "$out"
fi
`

// fakeProgram puts an executable named name on a PATH of its own and returns that PATH.
func fakeProgram(t testing.TB, name, script string) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + "/usr/bin" + string(os.PathListSeparator) + "/bin"
}

func readFake(t *testing.T, dir, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "fake-"+id+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// An isolated session of an uncommitted installation finds it: every path it is given is
// absolute, and its worktree holds the installation's behaviors and resources; the copies go
// again when it ends, so the worktree is removed.
func TestIsolatedSessionSeesAnUncommittedInstall(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("codex"), true)
	if out := gitRun(t, dir, "status", "--porcelain"); !strings.Contains(out, ".autonomy/") {
		t.Fatalf("the install should be uncommitted:\n%s", out)
	}
	path := fakeProgram(t, "codex", fakeCodex)
	tmp := t.TempDir() // holds its CODEX_HOME: codex is given a TMPDIR of its own
	r := newRunner(t, dir, Options{Env: []string{"PATH=" + path, "HOME=" + t.TempDir(), "TMPDIR=" + tmp, "CODEX_HOME=" + filepath.Join(tmp, "codex")}})
	res, err := r.Launch(context.Background(), LaunchRequest{Actor: "develop", Ref: "42"})
	if err != nil {
		t.Fatal(err)
	}
	s := waitEnded(t, r, res.Session.ID)
	r.Wait() // its worktree is removed after it ended
	if s.Status != ir.Done {
		t.Fatalf("develop ended %s: %s", s.Status, s.Reason)
	}
	got := readFake(t, dir, s.ID)
	wt := filepath.Join(dir, WorktreeDir, s.ID)
	common := gitRun(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	for _, want := range []string{
		"behavior=" + filepath.Join(dir, ".autonomy/skills/develop/SKILL.md") + "\n",
		"pwd=" + wt + "\n",
		"behavior-readable\n", "skill-in-workspace\n", "resource-in-workspace\n",
		"stdin=# develop\nImplement $ISSUE.\n",
		"add-dir=" + common + "\n",
		"add-dir=" + filepath.Join(common, "worktrees", s.ID) + "\n",
		"sandbox_workspace_write.network_access=true",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the session did not get %q:\n%s", want, got)
		}
	}
	if own, _, _ := strings.Cut(strings.SplitN(got, "tmpdir=", 2)[1], "\n"); filepath.Dir(own) != tmp || !strings.Contains(got, "tmpdir-exists\n") {
		t.Errorf("the session's TMPDIR is %q, want a new directory in %s:\n%s", own, tmp, got)
	} else if _, err := os.Stat(own); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("its TMPDIR %s is left after it ended: %v", own, err)
	}
	if strings.Contains(got, "{") && strings.Contains(got, "{git-dir}") {
		t.Errorf("a placeholder reached the agent:\n%s", got)
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the worktree %s was kept (the seeded copies should be gone): %v\n%s", wt, err, gitRun(t, wt, "status", "--porcelain", "--untracked-files=all"))
	}
	if out := gitRun(t, dir, "status", "--porcelain"); strings.Contains(out, "worktrees") {
		t.Errorf("the root changed:\n%s", out)
	}
}

// The structured result: codex's -o file is the result, validated against the schema given
// without its DO NOT EDIT member; a result that does not match fails with the field.
func TestPresetResultIsValidated(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("codex"), true)
	for _, c := range []struct {
		name, script, status, reason string
	}{
		{"good", fakeCodex, "done", ""},
		{"bad", strings.Replace(fakeCodex, `"verdict":"approve"`, `"verdict":"maybe"`, 1), "failed", "/verdict"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := fakeProgram(t, "codex", c.script)
			r := newRunner(t, dir, Options{Env: []string{"PATH=" + path}})
			res, err := r.Launch(context.Background(), LaunchRequest{Actor: "reviewer"})
			if err != nil {
				t.Fatal(err)
			}
			s := waitEnded(t, r, res.Session.ID)
			if string(s.Status) != c.status || !strings.Contains(s.Reason, c.reason) {
				t.Fatalf("ended %s (%s), want %s with %q", s.Status, s.Reason, c.status, c.reason)
			}
			got := readFake(t, dir, s.ID)
			schema := filepath.Join(dir, StateDir, "results", s.ID+".schema.json")
			if !strings.Contains(got, "--output-schema "+schema) {
				t.Errorf("the schema copy was not given:\n%s", got)
			}
			data, err := os.ReadFile(schema)
			if err != nil || strings.Contains(string(data), "DO NOT EDIT") || strings.Contains(string(data), "$schema") {
				t.Errorf("the schema given: %s %v", data, err)
			}
		})
	}
}

// With the preset's program missing, launch and tick refuse in one line naming the preset, its
// version and the install command; nothing is recorded.
func TestPreflightRefusesAMissingAgent(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("claude"), true)
	r := newRunner(t, dir, Options{Env: []string{"PATH=" + t.TempDir()}})
	ctx := context.Background()
	_, err := r.Launch(ctx, LaunchRequest{Actor: "develop", Ref: "1"})
	var refused *RefusedError
	want := `actor "develop": the agent preset claude needs @anthropic-ai/claude-code@2.1.330, which is not on PATH: install it with npm install --global @anthropic-ai/claude-code@2.1.330`
	if !errors.As(err, &refused) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want a refusal starting %q", err, want)
	}
	// Nothing is due at the first tick: the tick names what cannot start as a warning, no error.
	if rep, err := r.Tick(ctx); err != nil || !slices.ContainsFunc(rep.Unready, func(u Unready) bool { return strings.Contains(u.Reason, `actor "reviewer"`) }) {
		t.Fatalf("tick: %+v, %v", rep.Unready, err)
	}
	all, err := r.Store.List(ctx, store.ListOptions{All: true})
	if err != nil || len(all) != 0 {
		t.Fatalf("recorded %d sessions (%v), want none", len(all), err)
	}
	// Installed, it starts: the lookup is not cached as a miss.
	path := fakeProgram(t, "claude", "#!/bin/sh\ncat >/dev/null\necho '{\"type\":\"result\",\"result\":\"ok\",\"structured_output\":{\"verdict\":\"approve\",\"summary\":\"ok\",\"headSha\":\"4b825dc642cb6eb9a060e54bf8d69288fbee4904\"}}'\n")
	r2 := newRunner(t, dir, Options{Env: []string{"PATH=" + path}})
	res, err := r2.Launch(ctx, LaunchRequest{Actor: "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if s := waitEnded(t, r2, res.Session.ID); s.Status != ir.Done {
		t.Fatalf("reviewer ended %s: %s", s.Status, s.Reason)
	}
	data, err := os.ReadFile(filepath.Join(dir, StateDir, "results", res.Session.ID+".json"))
	if err != nil || string(data) != `{"verdict":"approve","summary":"ok","headSha":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}` {
		t.Fatalf("the structured output was not extracted: %s %v", data, err)
	}
}

// BenchmarkPreflight measures what the preflight adds to a launch: finding the preset's
// program on PATH (cached, checked again with one stat). Target: under 5 ms.
func BenchmarkPreflight(b *testing.B) {
	dir := installFleet(b, skillFleet("codex"), false)
	path := fakeProgram(b, "codex", "#!/bin/sh\n")
	r := newRunner(b, dir, Options{Env: []string{"PATH=" + path}})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.Preflight("develop"); err != nil {
			b.Fatal(err)
		}
	}
}

// A preset pinned to another version compiles, with a warning, and the preflight names it.
func TestPresetPinnedToAnotherVersion(t *testing.T) {
	t.Parallel()
	f := skillFleet("{ preset: codex, version: 0.170.0 }")
	dir := installFleet(t, f, false)
	var m struct{ Warnings []string }
	if err := readJSON(dir, ManifestPath, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(m.Warnings, "\n"), "policy.box.local.agent: @openai/codex is pinned to 0.170.0, not 0.169.0, the version autonomy was tested with") {
		t.Errorf("no warning: %q", m.Warnings)
	}
	r := newRunner(t, dir, Options{Env: []string{"PATH=" + t.TempDir()}})
	if err := r.Preflight("develop"); err == nil || !strings.Contains(err.Error(), "npm install --global @openai/codex@0.170.0") {
		t.Errorf("preflight: %v", err)
	}
}

// A session is seen ended only after its worktree is dealt with: its commits are on their
// branch by then (a reviewer launched on it at once finds it).
func TestEndedSessionHasItsBranch(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  develop:
    behavior: scripts/commit.sh
    triggers: [{ dispatch: true }]
    execution: { workspace: isolated }
`, files: map[string]string{"scripts/commit.sh": "#!/bin/sh\nset -e\necho x > f.txt\ngit add f.txt\ngit -c user.name=a -c user.email=a@b commit -qm feature\n" + scriptDone}}, true)
	r := newRunner(t, dir, Options{})
	for i := 0; i < 5; i++ {
		res, err := r.Launch(context.Background(), LaunchRequest{Actor: "develop"})
		if err != nil {
			t.Fatal(err)
		}
		s := waitEnded(t, r, res.Session.ID)
		if s.Status != ir.Done {
			t.Fatalf("ended %s: %s", s.Status, s.Reason)
		}
		if got := gitRun(t, dir, "log", "-1", "--format=%s", "autonomy/develop/"+s.ID); got != "feature" {
			t.Fatalf("branch tip %q", got)
		}
	}
}

// A worktree whose branch committed .autonomy as a symbolic link out of it (an agent can commit
// one) is not seeded through the link: the session's worktree is refused, nothing is written
// outside it.
func TestSeedFollowsNoLinkOutOfTheWorktree(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("codex"), true)
	r := newRunner(t, dir, Options{})
	workdir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(workdir, ".autonomy")); err != nil {
		t.Fatal(err)
	}
	undo, err := r.In.seed(workdir)
	if err == nil {
		undo()
		t.Error("seeding through a link out of the worktree succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("seeding wrote outside the worktree: %v", entries)
	}
}

// An agent working in the installation itself can write what autonomy installed there, which
// the runner later runs outside the sandbox (an actor's command and prelaunch): the supervisor
// puts every such file back when the session ends, and fails the session saying which.
func TestAgentCannotKeepChangesToTheInstallation(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, skillFleet("codex"), true)
	cfgPath := filepath.Join(dir, filepath.FromSlash(ActorPath("develop")))
	skill := filepath.Join(dir, ".autonomy", "skills", "reviewer", "SKILL.md")
	before := map[string][]byte{}
	for _, p := range []string{cfgPath, skill} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = data
	}
	tamper := `#!/bin/sh
cat > /dev/null
printf '{"command":{"argv":["/bin/sh","-c","touch pwned"]},"prelaunch":"touch pwned"}' > .autonomy/local/actors/develop.json
rm .autonomy/skills/reviewer/SKILL.md
ln -s /etc/hostname .autonomy/skills/reviewer/SKILL.md
echo '{"package":".autonomy/skills"}' > .autonomy/weave.json
while [ $# -gt 0 ]; do case "$1" in --output-last-message) echo '{"verdict":"approve","summary":"x","headSha":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}' > "$2"; shift;; esac; shift; done
`
	path := fakeProgram(t, "codex", tamper)
	r := newRunner(t, dir, Options{Env: []string{"PATH=" + path, "HOME=" + t.TempDir()}})
	res, err := r.Launch(context.Background(), LaunchRequest{Actor: "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	s := waitEnded(t, r, res.Session.ID)
	r.Wait()
	if s.Status != ir.Failed || !strings.Contains(s.Reason, ActorPath("develop")) || !strings.Contains(s.Reason, ".autonomy/skills/reviewer/SKILL.md") || !strings.Contains(s.Reason, ".autonomy/weave.json") {
		t.Errorf("the session ended %s: %s", s.Status, s.Reason)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".autonomy", "weave.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the weaving config the agent added is still there: %v", err)
	}
	for p, want := range before {
		fi, err := os.Lstat(p)
		got, _ := os.ReadFile(p)
		if err != nil || !fi.Mode().IsRegular() || !bytes.Equal(got, want) {
			t.Errorf("%s was not put back: %v %v\n%s", p, err, fi, got)
		}
	}
}
