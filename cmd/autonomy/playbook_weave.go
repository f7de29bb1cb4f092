package main

import (
	"fmt"
	"github.com/autonomyhq/autonomy/substrates/registry"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

func newPlaybookWeave() *cobra.Command {
	var dir, actor, skill, substrate, summary, at string
	cmd := &cobra.Command{
		Use:   "weave --actor A --skill FILE [--dir INSTALL] [--target T] [--summary FILE]",
		Short: "Weave an installation's overlays into a skill, as a session start does",
		Long: `weave applies the overlay package of the installation in --dir (default: the current directory)
to the skill FILE for actor A, exactly as the local runner does when a session starts, and prints
the woven skill on stdout. Every matching overlay left out (shadow, archived, expired, locked by
the persona, over the cap) is an audit line on stderr. --summary appends a markdown summary of
what was woven to FILE (for a GitHub Actions job: "$GITHUB_STEP_SUMMARY"). An installation without
an overlay package prints the skill unchanged.

Exit codes: 0 woven, 2 usage or I/O error.`,
		Example: `  autonomy playbook weave --actor librarian --skill .autonomy/skills/librarian/SKILL.md
  autonomy playbook weave --actor librarian --skill .autonomy/skills/librarian/SKILL.md --target gh-actions --summary "$GITHUB_STEP_SUMMARY"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if actor == "" || skill == "" {
				return usageError("--actor and --skill are required")
			}
			now, err := nowFlag(at)
			if err != nil {
				return err
			}
			text, err := playbook.ReadRegular(skill, playbook.MaxFileSize)
			if err != nil {
				return usageError("--skill %s: %s", skill, playbook.Reason(err))
			}
			behavior, _ := ir.BehaviorName(filepath.ToSlash(skill), text) // its declared name, as the runner matches it
			res, _, err := playbook.WeaveInstall(dir, ".autonomy", overlay.Actor{Name: actor, Behavior: behavior, Substrate: substrate}, string(text), now)
			if err != nil {
				return usageError("%v", err)
			}
			fmt.Fprint(cmd.OutOrStdout(), res.Skill)
			errOut := cmd.ErrOrStderr()
			for _, s := range res.Skipped {
				fmt.Fprintln(errOut, s.Audit(now, actor))
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(errOut, "warning: "+w)
			}
			if summary != "" {
				var f strings.Builder
				fmt.Fprintf(&f, "### Overlays woven for %s\n\n", actor)
				if len(res.Woven) == 0 {
					fmt.Fprintln(&f, "None.")
				}
				for i, w := range res.Woven {
					fmt.Fprintf(&f, "%d. `%s` (%s, priority %d)\n", i+1, w.Slug, w.Kind, w.Priority)
				}
				for _, s := range res.Skipped {
					fmt.Fprintf(&f, "- skipped `%s`: %s: %s\n", s.Slug, s.Reason, s.Detail)
				}
				if err := appendFile(summary, f.String()); err != nil {
					return usageError("--summary %s: %s", summary, playbook.Reason(err))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "the installation's root (holding .autonomy/)")
	cmd.Flags().StringVar(&actor, "actor", "", "the actor the session is for")
	cmd.Flags().StringVar(&skill, "skill", "", "the skill file (its folder's name is the skill/ target)")
	targetFlag(cmd.Flags(), &substrate, registry.OnThisMachine, "the substrate whose runtime/ overlays apply: one of "+strings.Join(registry.Names(), ", "))
	cmd.Flags().StringVar(&summary, "summary", "", "append a markdown summary to this file")
	cmd.Flags().StringVar(&at, "now", "", "weave as of this time (RFC 3339), for ttls; default now")
	return cmd
}
