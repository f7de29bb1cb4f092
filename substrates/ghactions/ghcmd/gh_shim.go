package ghcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// shimNames are the programs a model job's shims stand in for: gh and bun are read by package
// shim; autonomy is the binary itself, whose runner records a launch in a model job.
var shimNames = []string{"gh", "bun", "autonomy"}

// ghShimVerb is autonomy gh shim: install writes the wrappers a model job puts first on the
// agent's PATH; exec is what the gh and bun wrappers run.
func ghShimVerb() *cobra.Command {
	sh := &cobra.Command{
		Use:   "shim",
		Short: "The gh and bun a model job's agent runs: writes become checked effects (docs/gh-actions.md)",
		Example: `  autonomy gh shim install shims
  GITHUB_RUN_ID=7 GITHUB_SHA=… AUTONOMY_ACTOR=develop AUTONOMY_OUTPUTS=outputs.jsonl autonomy gh shim exec shims gh issue comment 42 --body "Working on it."`,
	}
	install := &cobra.Command{
		Use:     "install DIR",
		Short:   "Write the shims (gh, bun, autonomy) and env.sh, which puts DIR first on PATH, into DIR",
		Example: `  autonomy gh shim install shims`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := os.Executable()
			if err != nil {
				return exitcode.Usagef("shim install: %v", err)
			}
			if err := installShims(args[0], bin); err != nil {
				return exitcode.Usagef("shim install: %v", err)
			}
			return nil
		},
	}
	run := &cobra.Command{
		Use:   "exec DIR gh|bun [ARGS...]",
		Short: "Run one command line of the model's shell: a read runs the real program, a write is recorded as an effect",
		Long: `What the gh and bun wrappers in DIR run. A read runs the real program (the first on PATH
outside DIR); a write it maps (docs/gh-actions.md, "Skills that run gh and bun") is checked
against the actor's installed capabilities and caps and appended to the safe-output file
AUTONOMY_OUTPUTS, for the apply job; anything else is refused, naming the tool to use.

Exit codes: the real program's for a read; 0 a write recorded; 1 refused; 2 no model job's
environment.`,
		Example:            `  GITHUB_RUN_ID=7 GITHUB_SHA=… AUTONOMY_ACTOR=develop AUTONOMY_OUTPUTS=outputs.jsonl autonomy gh shim exec shims gh issue comment 42 --body "Working on it."`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				return cmd.Help() // flags are the program's, but for the shim's own help
			}
			if len(args) < 2 || (args[1] != "gh" && args[1] != "bun") {
				return exitcode.Usagef("shim exec: want DIR gh|bun [ARGS...]")
			}
			return shimExec(cmd.Context(), args[0], args[1], args[2:], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	sh.AddCommand(install, run)
	return sh
}

// installShims writes the wrappers into dir: each execs bin with its name's words, every path
// single-quoted (they are the job's own paths, never profile text).
func installShims(dir, bin string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range shimNames {
		words := quote(bin) + " gh shim exec " + quote(dir) + " " + name
		if name == "autonomy" {
			words = quote(bin)
		}
		script := "#!/bin/sh\n# Written by autonomy gh shim install (docs/gh-actions.md).\nexec " + words + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			return err
		}
	}
	// A login shell (bash -lc, as codex runs commands) may reset PATH in /etc/profile; BASH_ENV
	// is read after it and puts the shims first again.
	env := "case \":$PATH:\" in\n  *:" + quote(dir) + ":*) ;;\n  *) PATH=" + quote(dir) + ":\"$PATH\"; export PATH ;;\nesac\n"
	return os.WriteFile(filepath.Join(dir, "env.sh"), []byte(env), 0o644)
}

// quote single-quotes a word for sh.
func quote(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// shimExec runs one command line of name.
func shimExec(ctx context.Context, dir, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	read := shim.Reader(stdin)
	var call shim.Call
	var err error
	if name == "gh" {
		call, err = shim.GH(args, read)
	} else {
		call, err = shim.Bun(args)
	}
	if err != nil {
		return exitcode.Problemf("%v", err)
	}
	if call.Pass {
		return shim.PassThrough(ctx, dir, name, args, stdin, stdout, stderr)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := effect.ShimSessionFromEnv(ctx, os.Getenv)
	if err != nil {
		return exitcode.Usagef("%s: %v", name, err)
	}
	return recordCall(s, call, stdout, stderr)
}

// recordCall resolves and records a mapped call, telling the model what became of it.
func recordCall(s *effect.ShimSession, call shim.Call, stdout, stderr io.Writer) error {
	for _, n := range call.Notes {
		fmt.Fprintln(stderr, "autonomy:", n)
	}
	if call.Branch != "" {
		fmt.Fprintln(stderr, "autonomy:", shim.BranchIgnored)
	}
	in, err := s.Resolve(call)
	if err == nil {
		err = s.Record(call.Tool, in)
	}
	var refused *tools.Refused
	if errors.As(err, &refused) {
		return exitcode.Problemf("%v", err)
	}
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	fmt.Fprintf(stdout, "queued %s: a trusted job applies it after this session ends, if the actor's capabilities allow it\n", call.Tool)
	return nil
}

// recordLaunch is autonomy runner launch in a model job, whose token cannot dispatch: the
// launch is recorded as the launch tool's effect (--ref its subject, --text the param the actor
// takes subject.text as, --param verbatim), for the apply job to dispatch.
func recordLaunch(ctx context.Context, call substrates.RunnerCall) error {
	s, err := effect.ShimSessionFromEnv(ctx, os.Getenv)
	if err != nil {
		return exitcode.Usagef("launch: %v", err)
	}
	in := tools.LaunchInput{Actor: call.Args[0], Subject: call.Ref, Params: maps.Clone(call.Params)}
	if in.Params == nil {
		in.Params = map[string]string{}
	}
	var notes []string
	if call.Text != "" {
		name := s.Installed.DispatchParam(in.Actor, "subject.text")
		if name == "" {
			return exitcode.Usagef("--text: actor %q takes no subject.text when launched (give its params with --param)", in.Actor)
		}
		in.Params[name] = call.Text
	}
	for flag, v := range map[string]string{"from": call.From, "kind": call.Kind, "branch": call.Branch} {
		if v != "" {
			notes = append(notes, fmt.Sprintf("--%s %q is ignored on gh-actions", flag, v))
		}
	}
	return recordCall(s, shim.Call{Tool: tools.Launch, Input: in, Notes: notes}, call.Out, call.Err)
}
