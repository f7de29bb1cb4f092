package main

import "github.com/spf13/cobra"

func newPlaybook() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "playbook",
		Short: "Validate playbooks and index overlay packages",
		Long: `playbook works on the four playbook formats (docs/playbooks.md):

  capsule   *.playbook.md with frontmatter (type: playbook) and five required sections
  overlay   AIP-12 PLAYBOOK.md prompt overlays (schema: playbooks/v1) in a package with _index.md
  steps     markdown step playbooks: # Title, ## INPUTS, ## STEP N: …, ## ARTIFACTS
  workflow  YAML or JSON workflows: name, args, steps with namespaced commands and approvals

Overlays evolve by reflective deltas (AIP-12): reflect curates a proposed delta into a new
shadow overlay, trial weaves it in one installation to measure it, promote makes it active on a
measured improvement, archive retires superseded and expired ones.

Exit codes: 0 ok, 1 problems found, 2 usage or I/O error.`,
		Example: `  autonomy playbook validate profiles/librarian/playbooks/
  autonomy playbook validate --format json profiles/librarian/humans/collection-review.playbook.md
  autonomy playbook index profiles/librarian/playbooks/`,
	}
	cmd.AddCommand(newPlaybookValidate(), newPlaybookIndex(), newPlaybookWeave(), newPlaybookChecks(), newPlaybookRun(), newPlaybookResume(), newPlaybookStep(),
		newPlaybookReflect(), newPlaybookTrial(), newPlaybookPromote(), newPlaybookArchive())
	return cmd
}
