//go:build unix

package local

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// gitTamper is an agent that plants, in the git directory it commits into, what the user's own
// git would run: a post-checkout hook, an alias and a core.fsmonitor command in the config, a
// filter named in info/attributes; with LINK_HOOKS set it replaces the hooks folder by a link to
// one of its own instead.
var gitTamper = `#!/bin/sh
cat >/dev/null
common=$(git rev-parse --path-format=absolute --git-common-dir)
evil="$AUTONOMY_DIR/evil"
mkdir -p "$evil"
printf '#!/bin/sh\ntouch "%s/hook-ran"\n' "$AUTONOMY_DIR" > "$evil/post-checkout"
chmod +x "$evil/post-checkout"
if [ -n "$LINK_HOOKS" ]; then
  rm -rf "$common/hooks"
  ln -s "$evil" "$common/hooks"
else
  cp "$evil/post-checkout" "$common/hooks/post-checkout"
fi
git config alias.st '!touch pwned'
git config core.fsmonitor "$evil/post-checkout"
echo '* filter=evil' >> "$common/info/attributes"
git commit -q --allow-empty -m "agent work"
echo "$evil" >> "$common/objects/info/alternates"
` + deliverResult + `
if [ -n "$ASIDE_LINK" ]; then
  mkdir -p "$AUTONOMY_DIR/.autonomy/state/tampered"
  ln -s "$ASIDE_LINK" "$AUTONOMY_DIR/.autonomy/state/tampered/$AUTONOMY_SESSION"
fi
`

func gitTamperFleet(t *testing.T, workspace string) fleet {
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte(gitTamper), 0o755); err != nil {
		t.Fatal(err)
	}
	return fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  planter:
    behavior: skills/planter
    triggers: [{ dispatch: true }]
    execution: { workspace: ` + workspace + ` }
policy:
  box:
    local:
      agent: [/bin/sh, ` + agent + `]
`,
		files: map[string]string{"skills/planter/SKILL.md": "# planter\n"},
	}
}

// An agent can write the git directory it commits into, and plant there what the user's own git
// runs later. When its session ends, its supervisor puts back the hooks, the config and
// info/attributes as they were before it started, keeps the changed copies aside, and fails the
// session naming them; the user's next git command runs nothing the agent planted. The agent's
// commit is kept.
func TestAgentCannotKeepGitHooksOrConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, workspace, link string
		asideLink             bool
	}{
		{"root", "shared", "", false},
		{"isolated", "isolated", "", false},
		{"hooks-link", "isolated", "1", false},
		// The agent puts a link where the changed copies are kept: they are not written through it.
		{"aside-link", "shared", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := installFleet(t, gitTamperFleet(t, c.workspace), true)
			git := filepath.Join(dir, ".git")
			config, err := os.ReadFile(filepath.Join(git, "config"))
			if err != nil {
				t.Fatal(err)
			}
			hooksBefore, _ := os.ReadDir(filepath.Join(git, "hooks"))
			outside := t.TempDir()
			env := append(os.Environ(), "LINK_HOOKS="+c.link)
			if c.asideLink {
				env = append(env, "ASIDE_LINK="+outside)
			}
			r := newRunner(t, dir, Options{Env: env})
			s := launch(t, r, LaunchRequest{Actor: "planter"})
			got := waitEnded(t, r, s.ID)
			r.Wait()
			want := []string{"config", "info/attributes", "objects/info/alternates"}
			if c.link == "" {
				want = append(want, "hooks/post-checkout")
			} else {
				want = append(want, "hooks")
			}
			if got.Status != ir.Failed || !strings.Contains(got.Reason, "which your own git runs") {
				t.Fatalf("the session ended %s: %s", got.Status, got.Reason)
			}
			for _, p := range want {
				if !strings.Contains(got.Reason, filepath.Join(git, p)) {
					t.Errorf("the reason does not name %s: %s", p, got.Reason)
				}
			}
			if now, _ := os.ReadFile(filepath.Join(git, "config")); !bytes.Equal(now, config) {
				t.Errorf("the config was not put back:\n%s", now)
			}
			if fi, err := os.Lstat(filepath.Join(git, "hooks")); err != nil || !fi.IsDir() {
				t.Errorf("the hooks folder was not put back: %v %v", fi, err)
			}
			if after, _ := os.ReadDir(filepath.Join(git, "hooks")); len(after) != len(hooksBefore) {
				t.Errorf("hooks now %d entries, %d before", len(after), len(hooksBefore))
			}
			if _, err := os.Stat(filepath.Join(git, "info", "attributes")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("info/attributes the agent added is still there: %v", err)
			}
			if _, err := os.Stat(filepath.Join(git, "objects", "info", "alternates")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the alternates the agent added are still there: %v", err)
			}
			// The user's own git, plain: checking out runs no hook, no fsmonitor, no alias. (The
			// agent's own git ran its fsmonitor while it worked: that mark goes first.)
			os.Remove(filepath.Join(dir, "hook-ran"))
			gitRun(t, dir, "checkout", "-q", "-b", "after")
			gitRun(t, dir, "status", "--short")
			if _, err := os.Stat(filepath.Join(dir, "hook-ran")); err == nil {
				t.Error("the user's git ran the hook the agent planted")
			}
			aside := filepath.Join(dir, filepath.FromSlash(StateDir), "tampered", s.ID)
			if data, err := os.ReadFile(filepath.Join(aside, "config")); err != nil || !strings.Contains(string(data), "pwned") {
				t.Errorf("the changed config was not kept aside: %v\n%s", err, data)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("copies were written through the agent's link, outside the installation: %v", entries)
			}
			if c.workspace == "isolated" {
				if log := gitRun(t, dir, "log", "--format=%s", "autonomy/planter/"+s.ID); !strings.Contains(log, "agent work") {
					t.Errorf("the agent's commit is lost: %s", log)
				}
			}
		})
	}
}

func TestGuardedGitPaths(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"config": true, "config.worktree": true, "info/attributes": true, "hooks": true, "hooks/pre-commit": true,
		"worktrees/x/config.worktree": true, "modules/sub/config": true, "modules/sub/hooks/post-checkout": true,
		"modules/a/modules/b/info/attributes": true, "modules/sub/hooks": true,
		"commondir": true, "gitdir": true, "objects/info/alternates": true, "objects/info/http-alternates": true,
		"objects/info/packs": false, "objects/pack/x.pack": false,
		"HEAD": false, "index": false, "info/exclude": false, "worktrees/x/HEAD": false, "refs/heads/main": false,
		"modules/sub/HEAD": false, "description": false, "packed-refs": false,
	} {
		if got := guardedGit(p); got != want {
			t.Errorf("guardedGit(%q) = %v, want %v", p, got, want)
		}
	}
}

// Isolated sessions side by side, each adding and removing its worktree of the same repository
// while the others run: none takes another's worktree for a change to its git directory.
func TestGitGuardIgnoresOtherWorktrees(t *testing.T) {
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat >/dev/null\nsleep 0.$(( $$ % 3 ))\ngit commit -q --allow-empty -m work\n"+deliverResult+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := gitTamperFleet(t, "isolated")
	f.yml = f.yml[:strings.Index(f.yml, "agent: [")] + "agent: [/bin/sh, " + agent + "]\n"
	dir := installFleet(t, f, true)
	gitRun(t, dir, "config", "extensions.worktreeConfig", "true")
	r := newRunner(t, dir, Options{})
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, launch(t, r, LaunchRequest{Actor: "planter"}).ID)
	}
	for _, id := range ids {
		if s := waitEnded(t, r, id); s.Status != ir.Done {
			t.Errorf("%s ended %s: %s", id, s.Status, s.Reason)
		}
	}
	r.Wait()
}

// BenchmarkGitGuard is what the guard adds to a skill session: reading the guarded entries of a
// fresh repository's git directory before, and comparing after.
func BenchmarkGitGuard(b *testing.B) {
	dir := b.TempDir()
	gitRun(b, dir, "init", "-q")
	git, aside := filepath.Join(dir, ".git"), filepath.Join(b.TempDir(), "aside")
	for b.Loop() {
		snap, err := snapshotGit(git)
		if err != nil {
			b.Fatal(err)
		}
		if changed, err := snap.restore(aside); err != nil || len(changed) > 0 {
			b.Fatal(changed, err)
		}
	}
}

// placeholderAgent leaves what Claude Code's bubblewrap sandbox leaves: empty config.worktree
// files, made as the mount points that keep them read-only. With EXEC_HOOK it also leaves an
// empty but executable hook, which is a change.
var placeholderAgent = `#!/bin/sh
cat >/dev/null
common=$(git rev-parse --path-format=absolute --git-common-dir)
own=$(git rev-parse --path-format=absolute --git-dir)
: > "$common/config.worktree"
: > "$own/config.worktree"
if [ -n "$EXEC_HOOK" ]; then
  : > "$common/hooks/pre-push"
  chmod +x "$common/hooks/pre-push"
fi
git commit -q --allow-empty -m "agent work"
` + deliverResult + `
`

// An empty, non-executable file a sandbox leaves as a mount point runs nothing: it is removed,
// and the session is done. Anything more (here an empty executable hook) still fails it.
func TestSandboxPlaceholdersAreNoTampering(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, hook string
		want       ir.SessionStatus
	}{{"placeholders", "", ir.Done}, {"exec-hook", "1", ir.Failed}} {
		t.Run(c.name, func(t *testing.T) {
			agent := filepath.Join(t.TempDir(), "agent.sh")
			if err := os.WriteFile(agent, []byte(placeholderAgent), 0o755); err != nil {
				t.Fatal(err)
			}
			f := gitTamperFleet(t, "isolated")
			f.yml = strings.Replace(f.yml, "agent: [/bin/sh, ", "env: [EXEC_HOOK]\n      agent: [/bin/sh, "+agent+"] #", 1)
			dir := installFleet(t, f, true)
			r := newRunner(t, dir, Options{Env: append(os.Environ(), "EXEC_HOOK="+c.hook)})
			s := launch(t, r, LaunchRequest{Actor: "planter"})
			got := waitEnded(t, r, s.ID)
			r.Wait()
			if got.Status != c.want {
				t.Fatalf("the session ended %s (%s), want %s", got.Status, got.Reason, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "config.worktree")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the placeholder config.worktree is still there: %v", err)
			}
			if c.hook != "" && !strings.Contains(got.Reason, filepath.Join(dir, ".git", "hooks", "pre-push")) {
				t.Errorf("the reason does not name the hook: %s", got.Reason)
			}
		})
	}
}
