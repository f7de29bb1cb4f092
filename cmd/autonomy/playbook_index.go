package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

func newPlaybookIndex() *cobra.Command {
	var check bool
	cmd := &cobra.Command{
		Use:   "index DIR",
		Short: "Regenerate an overlay package's _index.md",
		Long: `index reads every overlay of the package DIR (each *.md below it except README.md, _*.md and
the capsule and step playbooks kept there) and writes DIR/_index.md: every overlay with its slug, title, targets, status, priority and
lock_check, sorted by slug. The same overlays always give the same bytes, and an index that is
already right is not rewritten. Nothing is written while an overlay has errors.

With --check nothing is written: the command fails when the index is missing or stale.
Exit codes: 0 written or up to date, 1 the overlays have errors (or, with --check, the index is
stale), 2 usage or I/O error.`,
		Example: `  autonomy playbook index profiles/librarian/playbooks/
  autonomy playbook index --check profiles/librarian/playbooks/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				return usageError("%s: not a directory", dir)
			}
			pkg, diags, err := playbook.LoadPackage(dir)
			if err != nil {
				return usageError("%v", err)
			}
			fmt.Fprint(out, diags.String())
			file := filepath.Join(dir, overlay.IndexFile)
			if diags.HasErrors() {
				return &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s not written: the overlays have errors", file)}
			}
			if check {
				have, _ := overlay.ReadFile(file, 8<<20)
				if string(have) != string(overlay.Index(pkg.Overlays)) {
					return &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s is stale: run autonomy playbook index %s", file, dir)}
				}
				fmt.Fprintf(errOut, "%s is up to date (%s)\n", file, count(len(pkg.Overlays), "overlay"))
				return nil
			}
			wrote, err := overlay.WriteIndex(pkg)
			if err != nil {
				return usageError("%v", err)
			}
			if wrote {
				fmt.Fprintf(out, "write %s\n", file)
			}
			fmt.Fprintf(errOut, "%s: %s indexed\n", file, count(len(pkg.Overlays), "overlay"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "write nothing; fail when the index is missing or stale")
	return cmd
}
