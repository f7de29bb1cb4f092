//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rhysd/actionlint"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/testbin"
)

// secondTerminal marks a block of docs/quickstart.md that the reader leaves running in a second
// terminal: one long-running command.
const secondTerminal = "# in a second terminal"

// fence finds the fenced blocks of a markdown file: the info string and the body.
var fence = regexp.MustCompile("(?ms)^```([a-z]*)[^\n]*\n(.*?)^```[ \t]*$")

// quickstartScript turns the sh blocks of the quickstart, in order, into one bash script: each
// block as it is, but a second-terminal block, which runs in the background until the script
// reads its first line of output (it is serving then), and is stopped with SIGINT, as Ctrl-C
// would, at the end, its exit status checked.
func quickstartScript(t *testing.T, doc string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(scriptHead)
	blocks := 0
	for _, m := range fence.FindAllStringSubmatch(doc, -1) {
		switch m[1] {
		case "sh":
		case "text", "yaml", "json":
			continue // shown, not run: the setup outside the test, GitHub's side
		default:
			t.Fatalf("docs/quickstart.md has a %q block: write sh (run by this test) or text (shown only)", m[1])
		}
		blocks++
		body := m[2]
		if !strings.HasPrefix(body, secondTerminal+"\n") {
			b.WriteString(body)
			continue
		}
		cmd := strings.TrimSpace(strings.TrimPrefix(body, secondTerminal+"\n"))
		if cmd == "" || strings.Contains(cmd, "\n") {
			t.Fatalf("a second-terminal block holds one command, not %q", cmd)
		}
		inBackground(&b, cmd)
	}
	if blocks < 5 {
		t.Fatalf("only %d sh blocks in docs/quickstart.md", blocks)
	}
	b.WriteString(stopBackground)
	return b.String()
}

// scriptHead starts a script of a new user's commands: it stops on the first failure, and kills
// what runs in the background (inBackground) if it does.
const scriptHead = "set -euo pipefail\nqs_model=\ntrap '[ -z \"$qs_model\" ] || kill \"$qs_model\" 2>/dev/null || true' EXIT\n"

// stopBackground stops what inBackground started with SIGINT, as Ctrl-C would, and checks its
// exit status.
const stopBackground = "if [ -n \"$qs_model\" ]; then kill -INT \"$qs_model\"; wait \"$qs_model\"; qs_model=; fi\n"

// inBackground writes to b the script lines that run cmd, a long-running command (one a reader
// leaves running in a second terminal), in the background until it printed its first line (it
// is serving then), which the script echoes as "second terminal: LINE".
func inBackground(b *strings.Builder, cmd string) {
	fmt.Fprintf(b, "mkfifo \"$QS_TMP/bg.out\"\n( exec %s ) > \"$QS_TMP/bg.out\" 2> \"$QS_TMP/bg.err\" &\nqs_model=$!\nexec 3< \"$QS_TMP/bg.out\"\nread -r qs_first <&3\necho \"second terminal: $qs_first\"\n", cmd)
}

// TestQuickstart runs docs/quickstart.md's commands as a new user would, with the binary built
// as a release is, the pinned codex and the scripted model (on a free port: 4000 is taken
// first, as it may be on a shared machine): the local fleet's session ends done
// having run the scripted command, and the gh-actions installation is up to date and passes
// actionlint (shellcheck included).
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real codex against the scripted model")
	}
	codex := agentclitest.Require(t, "codex")
	doc, err := os.ReadFile("../../docs/quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	script := quickstartScript(t, string(doc))
	if l, err := net.Listen("tcp", "127.0.0.1:4000"); err == nil {
		defer l.Close() // a port the doc could have fixed, taken, as on a shared machine
	}
	work := t.TempDir()
	out := runAsNewUser(t, codex, work, script)
	if !regexp.MustCompile(`second terminal: OPENAI_BASE_URL=http://127\.0\.0\.1:[1-9][0-9]*/v1\n`).MatchString(out) ||
		strings.Contains(out, "127.0.0.1:4000") {
		t.Errorf("the scripted model did not serve on a free port:\n%s", out)
	}
	for _, want := range []string{
		"Hello from the scripted model",
		"gh-actions: 6 generated files up to date",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the quickstart's output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^status:\s+done$`).MatchString(out) {
		t.Errorf("the session did not end done:\n%s", out)
	}
	lintQuickstartWorkflows(t, filepath.Join(work, "gh-repo", ".github", "workflows"))
}

// lintQuickstartWorkflows runs actionlint, with shellcheck, on every workflow of dir.
func lintQuickstartWorkflows(t *testing.T, dir string) {
	t.Helper()
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatal("shellcheck is not installed (apt-get install shellcheck; .ci/run installs it)")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	if len(files) < 2 {
		t.Fatalf("%d workflows in %s", len(files), dir)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %s", e.Error())
	}
}

// runAsNewUser runs script with bash in work as a new user would: autonomy (built as a release
// is) and the pinned codex (unless codex is "") on PATH, a fresh HOME, a git identity, at most 4
// minutes. It returns the script's output, and fails the test, with what ran in the background,
// if it failed.
func runAsNewUser(t *testing.T, codex, work, script string) string {
	t.Helper()
	bin, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(testbin.Path(t), filepath.Join(bin, "autonomy")); err != nil {
		t.Fatal(err)
	}
	if codex == "" {
		codex = filepath.Join(bin, "codex") // no codex: autonomy's own directory instead
	}
	// A newcomer's git knows who they are (the quickstart's prerequisite), as their sessions'
	// git does: from the home's configuration, not the shell's GIT_* variables.
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = q\n\temail = q@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + filepath.Dir(codex) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "QS_TMP=" + tmp, "TMPDIR=" + os.TempDir(),
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever the script left in its group
	}
	if err != nil {
		bg, _ := os.ReadFile(filepath.Join(tmp, "bg.err"))
		t.Fatalf("the script failed: %v\n%s\nin the background:\n%s", err, out.String(), bg)
	}
	return out.String()
}
