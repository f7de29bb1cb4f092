//go:build unix

package engine

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A reference's value never becomes an option of the program it is passed to: `git tag
// $args.VERSION` with VERSION=--list (a launch's text, which a model may set) is refused before
// git runs, saying how to write the command; after `--` the same value is an operand; a literal
// option of the author's and a value that is no option still run.
func TestReferenceValueNeverBecomesAnOption(t *testing.T) {
	cases := []struct {
		name, command, args, wantErr string
		tags                         []string
	}{
		{"option", "cli git tag $args.VERSION", `{"VERSION":"--list"}`, `the value of $args.VERSION, "--list", starts with "-", and git would read it as an option: put -- before it in the command (git tag -- $args.VERSION)`, nil},
		{"an earlier output", "cli git tag $first.stdout", `{"VERSION":"x"}`, `the value of $first.stdout, "-d", starts with "-"`, nil},
		{"operand after --", "cli git tag -- $args.VERSION", `{"VERSION":"v2"}`, "", []string{"v0.9", "v2"}},
		{"an option after --", "cli printf %s\\n -- $args.VERSION", `{"VERSION":"-x"}`, "", []string{"v0.9"}},
		{"a value", "cli git tag $args.VERSION", `{"VERSION":"v1.0"}`, "", []string{"v0.9", "v1.0"}},
		{"the author's option", "cli git tag --list", `{"VERSION":"x"}`, "", []string{"v0.9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, ws, file := setup(t, "name: h\nargs:\n  VERSION: { default: v1 }\nsteps:\n  - id: first\n    command: cli printf -- -d\n  - id: tag\n    command: "+c.command+"\n")
			for _, args := range [][]string{{"init", "--quiet"}, {"-c", "user.name=a", "-c", "user.email=a@b", "commit", "--quiet", "--allow-empty", "-m", "x"}, {"tag", "v0.9"}} {
				cmd := osexec.Command("git", args...)
				cmd.Dir = ws
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, out)
				}
			}
			env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, ArgsJSON: c.args})
			if c.wantErr != "" {
				if env.OK || env.Error == nil || !strings.Contains(env.Error.Message, c.wantErr) {
					t.Fatalf("got %+v, want the error %q", env.Error, c.wantErr)
				}
				if out, _ := osexec.Command("git", "-C", ws, "tag").Output(); strings.TrimSpace(string(out)) != "v0.9" {
					t.Errorf("tags after the refusal: %q", out)
				}
				return
			}
			if !env.OK {
				t.Fatalf("refused: %+v", env.Error)
			}
			tags, _ := os.ReadDir(filepath.Join(ws, ".git", "refs", "tags"))
			var names []string
			for _, d := range tags {
				names = append(names, d.Name())
			}
			if strings.Join(names, ",") != strings.Join(c.tags, ",") {
				t.Errorf("tags %v, want %v", names, c.tags)
			}
		})
	}
}

// A secret's value that starts with "-" is refused as an option without quoting any of it: the
// redaction replaces a whole value, never a clipped prefix.
func TestOptionRefusalQuotesNoSecret(t *testing.T) {
	secret := "-" + strings.Repeat("S3cr3tV4lu3", 8)
	e, ws, file := setup(t, "name: s\nsteps:\n  - id: a\n    command: cli printf $secrets.API_TOKEN\n")
	e.Env = append(os.Environ(), "API_TOKEN="+secret)
	env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws, Secrets: []string{"API_TOKEN"}})
	if env.OK || env.Error == nil || !strings.Contains(env.Error.Message, `the value of $secrets.API_TOKEN, a secret's value, starts with "-"`) {
		t.Fatalf("got %+v", env.Error)
	}
	if strings.Contains(env.Error.Message, "S3cr3t") {
		t.Errorf("the refusal quotes the secret: %q", env.Error.Message)
	}
}
