// Package shim reads the write commands existing skills run in a model's shell (`gh issue
// comment`, `gh issue edit --add-label`, `gh workflow run`, the reference's `bun scripts/runner.ts
// launch`) and says which tool of package tools each one is: the substrate's shims (the `gh` and
// `bun` on the agent's PATH) record it as that tool's effect, through the same check as the MCP
// server. A read is passed to the real program; a write it cannot map is refused with the tool
// to use instead. The package only reads words: what an actor may do, which workflow is whose
// and which label is a lifecycle state are the substrate's to resolve, from its installation.
package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/tools"
)

// Call is what one command line is.
type Call struct {
	// Pass is true for a read: the real program runs it, unchanged.
	Pass bool
	// Tool is the effect the command asks for (a tools name); Input its input, ready to marshal.
	Tool  string
	Input any
	// Workflow is set for `gh workflow run`: the workflow (file name, name or id) whose actor
	// the caller resolves into the launch's actor.
	Workflow string
	// AddLabels and RemoveLabels are set for `gh issue edit`: the caller resolves the one label
	// added into the lifecycle state set_state moves the item to.
	AddLabels, RemoveLabels []string
	// Branch is a launch's --branch (bun scripts/runner.ts launch ACTOR --branch B): the branch
	// the launcher asks its actor to work on. The local runner runs an actor of the shared
	// workspace there, in a worktree of its own, as runner launch --branch does (the reference's
	// skills launch their developer so; without it, it commits on the branch the installation
	// root has checked out); a substrate that names a proposal's branch itself ignores it, saying
	// so (BranchIgnored).
	Branch string
	// Notes are flags read and ignored, said to the model.
	Notes []string
}

// BranchIgnored is what a substrate that names a proposal's branch says of a launch's --branch.
const BranchIgnored = "--branch is ignored: the substrate names a proposal's branch (autonomy/<actor>/<subject>)"

// Refusal is a command the shim will not run, with what to do instead.
type Refusal struct {
	Command, Reason string
}

func (r *Refusal) Error() string { return r.Command + ": refused: " + r.Reason }

// docs is where the tools are described, named in every refusal.
const docs = " (the tools: docs/tools.md)"

func refuse(cmd, format string, args ...any) *Refusal {
	return &Refusal{Command: cmd, Reason: fmt.Sprintf(format, args...) + docs}
}

// flags is a command's words after its subcommand: its flags by long name and its positional
// words, as gh and the reference's runner parse them.
type flags struct {
	values map[string][]string
	args   []string
}

// spec names the flags a command takes: long name → short letter ("" for none) and whether it
// takes a value. Anything else is refused by parse.
type spec map[string]struct {
	short string
	value bool
}

// parse reads words against sp: --name value, --name=value, -x value, -xvalue, and "--" ending
// the flags. A flag sp does not name is an error naming it.
func parse(cmd string, words []string, sp spec) (flags, error) {
	f := flags{values: map[string][]string{}}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			f.args = append(f.args, words[i+1:]...)
			break
		}
		if len(w) < 2 || w[0] != '-' {
			f.args = append(f.args, w)
			continue
		}
		name, value, inline := lookup(w, sp)
		if name == "" {
			return f, refuse(cmd, "the flag %s is not one the shim knows how to map", w)
		}
		if !sp[name].value {
			if inline {
				return f, refuse(cmd, "the flag --%s takes no value", name)
			}
			f.values[name] = append(f.values[name], "true")
			continue
		}
		if !inline {
			if i+1 >= len(words) {
				return f, refuse(cmd, "the flag %s needs a value", w)
			}
			i++
			value = words[i]
		}
		f.values[name] = append(f.values[name], value)
	}
	return f, nil
}

// lookup finds the flag of word w in sp: its long name, and its value when written inline.
func lookup(w string, sp spec) (name, value string, inline bool) {
	if strings.HasPrefix(w, "--") {
		name, value, inline = strings.Cut(w[2:], "=")
		if _, ok := sp[name]; ok {
			return name, value, inline
		}
		return "", "", false
	}
	for long, s := range sp {
		if s.short != "" && strings.HasPrefix(w[1:], s.short) {
			rest := w[1+len(s.short):]
			return long, strings.TrimPrefix(rest, "="), rest != ""
		}
	}
	return "", "", false
}

// one returns the single value of flag name, refusing more than one.
func (f flags) one(cmd, name string) (string, error) {
	vs := f.values[name]
	if len(vs) > 1 {
		return "", refuse(cmd, "--%s is given %d times; give it once", name, len(vs))
	}
	if len(vs) == 0 {
		return "", nil
	}
	return vs[0], nil
}

// list returns every value of flag name, comma-separated values split, as gh reads them.
func (f flags) list(name string) []string {
	var out []string
	for _, v := range f.values[name] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

var itemURL = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^https?://[^/]+/[^/]+/[^/]+/(?:issues|pull)/([0-9]+)/?$`)
})

// item reads a work item as gh takes it: 12, #12, or its URL on the web.
func item(cmd, w string) (string, error) {
	s := strings.TrimPrefix(w, "#")
	if m := itemURL().FindStringSubmatch(w); m != nil {
		s = m[1]
	}
	if s == "" || strings.Trim(s, "0123456789") != "" || len(s) > 12 {
		return "", refuse(cmd, "%q is not an issue or pull request number", w)
	}
	return s, nil
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`) })

// param reads K=V as a launch param.
func param(cmd, flag, kv string, params map[string]string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || !envName().MatchString(k) {
		return refuse(cmd, "%s %q: write NAME=VALUE, NAME an input of the actor (A-Z, 0-9, _)", flag, kv)
	}
	if _, dup := params[k]; dup {
		return refuse(cmd, "%s sets %s twice", flag, k)
	}
	params[k] = v
	return nil
}

// Reader reads a --body-file as the shims do: a file, or stdin for "-", at most tools.MaxBody
// bytes (a longer one is an error).
func Reader(stdin io.Reader) ReadFile {
	return func(file string) ([]byte, error) {
		r := stdin
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		data, err := io.ReadAll(io.LimitReader(r, tools.MaxBody+1))
		if err == nil && len(data) > tools.MaxBody {
			err = fmt.Errorf("longer than %d bytes", tools.MaxBody)
		}
		return data, err
	}
}

// PassThrough runs the real program name, the first on PATH outside dir (the shims' folder),
// with args and the standard streams; its exit is the returned error's code (exitcode.Error).
func PassThrough(ctx context.Context, dir, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	real, err := LookPathOutside(name, dir)
	if err != nil {
		return exitcode.Usagef("%s: %v", name, err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cmd := exec.CommandContext(ctx, real, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &exitcode.Error{Code: exit.ExitCode()}
	}
	if err != nil {
		return exitcode.Usagef("%s: %v", name, err)
	}
	return nil
}

// LookPathOutside finds the real program name on PATH, skipping dir (the shims' folder).
func LookPathOutside(name, dir string) (string, error) {
	abs, _ := filepath.Abs(dir)
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" {
			continue
		}
		if a, _ := filepath.Abs(d); a == abs {
			continue
		}
		p, err := exec.LookPath(filepath.Join(d, name))
		if err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found on PATH (outside the shims in %s)", dir)
}
