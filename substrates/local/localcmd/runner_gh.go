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
		Use:   "gh [ARGS...]",
		Short: "The gh of a session's shell: a write it maps is the session's tool call; a read runs the real gh",
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
			call, err := shim.GH(args, shim.Reader(cmd.InOrStdin()))
			if err != nil {
				return exitcode.Problemf("%v", err)
			}
			if call.Pass {
				return ghRead(cmd.Context(), args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
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
				return exitcode.Problemf("gh: %v", err)
			case err != nil:
				return runnerError(err)
			}
			b, _ := json.Marshal(out)
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", call.Tool, b)
			return nil
		},
	}
}

// ghRead runs a read on the real gh, when the session holds a token to read with.
func ghRead(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if os.Getenv("GH_TOKEN") == "" && os.Getenv("GITHUB_TOKEN") == "" {
		return exitcode.Problemf("gh: refused: this session holds no GitHub token to read with: the runner gives a session none unless the profile lists one in policy.box.local.env (a read-only token, e.g. env: [GH_TOKEN]); the writes go through the tools (docs/tools.md)")
	}
	return shim.PassThrough(ctx, local.ShimOnPath(os.Getenv("PATH")), "gh", args, stdin, stdout, stderr)
}
