package localcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/internal/shim"
	"github.com/autonomyhq/autonomy/internal/tools"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// newRunnerGH is runner gh: what the gh on a preset session's PATH runs (the gh shim).
func newRunnerGH(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use: "gh [ARGS...]",
		// Run by the shim on a session's PATH, never by a person: hidden, as runner supervise is.
		Hidden: true,
		Short:  "The gh of a session's shell: a write it maps is the session's tool call; a read runs the real gh",
		Long: `What the gh at the front of a preset session's PATH runs, with the session's environment
(docs/tools.md, "Skills that run gh"). A write it maps (gh issue comment, gh pr comment, gh issue
create, gh issue edit --add-label STATE, gh workflow run ACTOR) is the same call as the session's
tool (comment, create_item, set_state, launch): checked against its actor's capabilities, scopes
and caps, and realized by the runner as that session (on GitHub, for codeHost github, with the
runner's token). A write it does not map is refused, naming the tool to use. A read (gh issue
view, gh pr diff, gh api GET …) runs the real gh, the first on PATH after the shim, only when
the session holds a token to read with (policy.box.local.env: [GH_TOKEN]); else it is refused.

Exit codes: the real gh's for a read; 0 a write realized; 1 refused; 2 usage or I/O error.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			files := map[string][]byte{}
			call, err := shim.GH(args, recording(doorFiles(cmd.InOrStdin(), shim.Reader(cmd.InOrStdin())), files))
			if err != nil {
				return exitcode.Problemf("%v", err)
			}
			if call.Pass {
				if err := noPassInDoor("gh"); err != nil {
					return err
				}
				return ghRead(cmd.Context(), args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if done, err := f.shimViaDoor(cmd, "gh", args, files); done {
				return err
			}
			return shimCall(cmd, f, "gh", call)
		},
	}
}

// newRunnerBun is runner bun: what the bun on a preset session's PATH runs (the bun shim).
func newRunnerBun(f *runnerFlags) *cobra.Command {
	return &cobra.Command{
		Use: "bun [ARGS...]",
		// Run by the shim on a session's PATH, never by a person: hidden, as runner supervise is.
		Hidden: true,
		Short:  "The bun of a session's shell: the reference's bun scripts/runner.ts launch is the session's launch tool",
		Long: `What the bun at the front of a preset session's PATH runs, with the session's environment
(docs/migrating.md, "The runner and gh writes in skills"). The reference implementation's runner
CLI, bun scripts/runner.ts launch ACTOR [--ref ITEM] [--NAME VALUE]..., is read as on gh-actions
(--ref is the subject, any other --NAME VALUE the param NAME; --workspace and --fence are ignored,
saying why; --branch B runs an actor of the shared workspace on branch B, in a worktree of its
own, as runner launch --branch does) and is the session's launch tool: checked against its actor's
agent:launch and its @scope and caps, and realized by the runner as that session. The runner
script's other verbs are refused, naming the tool to use. Any other bun command runs the real bun,
the first on PATH after the shim, or fails saying none is installed.

Exit codes: the real bun's for a command passed to it; 0 a launch realized; 1 refused; 2 usage
or I/O error (no real bun).`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			call, err := shim.Bun(args)
			if err != nil {
				return exitcode.Problemf("%v", err)
			}
			if call.Pass {
				if err := noPassInDoor("bun"); err != nil {
					return err
				}
				return bunPass(cmd.Context(), args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if done, err := f.shimViaDoor(cmd, "bun", args, nil); done {
				return err
			}
			return shimCall(cmd, f, "bun", call)
		},
	}
}

// shimCall realizes a call the shim of name mapped as the session's tool call, printing the
// tool's answer.
func shimCall(cmd *cobra.Command, f *runnerFlags, name string, call shim.Call) error {
	for _, n := range call.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "autonomy:", n)
	}
	r, err := f.open()
	if err != nil {
		return err
	}
	defer r.Close()
	h, s, err := r.Hands()
	if err != nil {
		return runnerError(err)
	}
	out, err := h.Shim(context.Background(), s, call)
	var refused *tools.Refused
	switch {
	case errors.As(err, &refused):
		return exitcode.Problemf("%s: %v", name, err)
	case err != nil:
		return runnerError(err)
	}
	if ts, ok := out.(local.ToolSession); ok && call.Branch != "" && ts.Branch != call.Branch {
		fmt.Fprintf(cmd.ErrOrStderr(), "autonomy: --branch is ignored: %s works in a worktree of its own, on the branch the runner names (autonomy/%s/<session>)\n", ts.Actor, ts.Actor)
	}
	b, _ := json.Marshal(out)
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", call.Tool, b)
	return nil
}

// bunPass runs a bun command the shim does not map on the real bun, when there is one.
func bunPass(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	dir := local.ShimOnPath(os.Getenv("PATH"))
	if _, err := shim.LookPathOutside("bun", dir); err != nil {
		return exitcode.Usagef("bun: no real bun is installed (%v): this session's bun maps only the reference's runner CLI, bun %s launch ACTOR --ref ITEM, onto the launch tool (docs/migrating.md); install bun for anything else", err, shim.RunnerScript)
	}
	return shim.PassThrough(ctx, dir, "bun", args, stdin, stdout, stderr)
}

// ghRead runs a read on the real gh, when the session holds a token to read with.
func ghRead(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if os.Getenv("GH_TOKEN") == "" && os.Getenv("GITHUB_TOKEN") == "" {
		return exitcode.Problemf("gh: refused: this session holds no GitHub token to read with: the runner gives a session none unless the profile lists one in policy.box.local.env (a read-only token, e.g. env: [GH_TOKEN]); the writes go through the tools (docs/tools.md)")
	}
	return shim.PassThrough(ctx, local.ShimOnPath(os.Getenv("PATH")), "gh", args, stdin, stdout, stderr)
}
