package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/gcfloor"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

func newCheck() *cobra.Command {
	var target, dir, format string
	var strict, verbose bool
	var keep []string
	cmd := &cobra.Command{
		Use:   "check PROFILE [--target T] [--dir DIR]",
		Short: "Fail when the generated files in a directory drift from the profile",
		Long: `check compiles the profile in memory and compares the result with DIR (default: the current
directory), writing nothing. It prints a unified diff for every generated file whose content
differs, and lists generated files that are missing and stale ones (generated before for this
target, no longer produced by the profile). Run it in CI so a pull request that edits a
generated workflow by hand, or changes the profile without compiling, fails.

--target may be omitted when the profile declares exactly one target. --strict makes warnings
fail: the files are still compared, and any warning exits 1. A file kept with --keep PATH (or
policy.box.autonomy.keep) is not compared when it is on disk. --format json prints the drift, the
warnings and, when check fails, why (failure). --format github prints every drifted file and
warning as a GitHub Actions annotation; --format sarif as a SARIF 2.1.0 log (rules: drift,
profile).

Exit codes: 0 up to date, 1 drift found (or the profile has errors, or warnings with --strict),
2 usage or I/O error.`,
		Example: `  autonomy check profiles/sdlc --target gh-actions
  autonomy check autonomy --target gh-actions --dir .
  autonomy check profiles/hello --target local --dir ../fleet --format json
  autonomy check profiles/release-gate --target gh-actions --strict
  autonomy check profiles/hello --target local --format github`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "github", "sarif"); err != nil {
				return err
			}
			gcfloor.OneShot()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			p, sub, warnings, err := loadFor(args[0], target, "checked", errOut, verbose)
			if err != nil {
				return err
			}
			output, err := compileTo(sub, p, dir, errOut, verbose)
			if err != nil {
				return err
			}
			if err := applyKeep(&output, keep); err != nil {
				return err
			}
			drifts, err := substrates.Check(dir, &output)
			if err != nil {
				return usageError("%v", err)
			}
			index := substrates.IndexDrift(p, dir)
			drifts = append(drifts, index...)
			warnings = append(warnings, output.Warnings...)
			// A governing document missing from the directory, and a directory that is not where
			// the installation takes effect, as compile warns of them (newc10: checked from inside
			// the profile's folder, check only said to compile there).
			docs := append(substrates.MissingDocuments(p.Profile, dir, &output), substrates.Rivals(sub, dir, &output)...)
			docs = append(docs, substrates.Placement(sub, p.Profile, dir)...)
			fmt.Fprint(errOut, docs.String())
			warnings = append(warnings, docs...)
			// What would make compile refuse to write (a build the jobs cannot install) is most
			// likely why the files differ: said first, as a warning.
			_ = blocked(output, true, errOut)
			for _, d := range output.Blockers {
				d.Severity = ir.Warning
				warnings = append(warnings, d)
			}
			var fail error
			if len(drifts) > 0 {
				fail = &exitError{Code: exitProblems, Msg: fmt.Sprintf("%s: %s drifted from %s in %s: run autonomy compile %s --target %s --dir %s to bring them in line (a file edited by hand is overwritten only with --force: move the edit into the profile first)",
					sub.Name(), count(len(drifts), "file"), p.File, dir, args[0], sub.Name(), dir)}
			} else {
				fmt.Fprintf(errOut, "%s: %s up to date in %s\n", sub.Name(), count(len(output.Files), "generated file"), dir)
				fail = strictly(strict, len(warnings), p.File, "")
			}
			switch format {
			case "json":
				if err := writeCheckJSON(out, checkReport{Target: sub.Name(), Dir: dir, Drift: drifts, Warnings: warnings}, fail); err != nil {
					return err
				}
				return fail
			case "github", "sarif":
				findings := append(driftFindings(drifts, dir), diagFindings(warnings)...)
				if err := writeFindings(out, format, []cliout.Rule{ruleProfile, ruleDrift}, findings); err != nil {
					return err
				}
				return fail
			}
			printDrift(out, drifts[:len(drifts)-len(index)], dir)
			printIndexDrift(out, index, dir)
			return fail
		},
	}
	targetFlag(cmd.Flags(), &target, "", "the substrate to check; optional when the profile declares one target")
	dirFlag(cmd.Flags(), &dir, "", ".", "the directory holding the installed files")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json, github (workflow-command annotations) or sarif (SARIF 2.1.0)")
	cmd.Flags().BoolVar(&strict, "strict", false, strictUsage)
	cmd.Flags().BoolVar(&verbose, "verbose", false, verboseUsage)
	keepFlag(cmd.Flags(), &keep)
	return cmd
}

// checkReport is check's result in --format json.
type checkReport struct {
	Target   string             `json:"target"`
	Dir      string             `json:"dir"`
	Drift    []substrates.Drift `json:"drift"`
	Warnings ir.Diagnostics     `json:"warnings"`
	// Failure says why check exits 1: the drift, or the warnings under --strict.
	Failure string `json:"failure,omitempty"`
}

// writeCheckJSON prints rep as JSON, with fail's message as its failure.
func writeCheckJSON(out io.Writer, rep checkReport, fail error) error {
	if rep.Drift == nil {
		rep.Drift = []substrates.Drift{}
	}
	if rep.Warnings == nil {
		rep.Warnings = ir.Diagnostics{}
	}
	if fail != nil {
		rep.Failure = fail.Error()
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// printDrift prints every drifted generated file: missing, stale, or changed with its diff.
func printDrift(out io.Writer, drifts []substrates.Drift, dir string) {
	for _, d := range drifts {
		path := filepath.ToSlash(filepath.Join(dir, d.Path))
		switch {
		case d.Kind == substrates.Missing:
			fmt.Fprintf(out, "%s: missing: the profile generates it; run autonomy compile\n", path)
		case d.Kind == substrates.Stale:
			fmt.Fprintf(out, "%s: stale: generated before, the profile no longer produces it; run autonomy compile to delete it\n", path)
		case d.Edited:
			fmt.Fprintf(out, "%s: changed: %s\n", path, editedDrift)
			printDiff(out, d.Diff)
		default:
			fmt.Fprintf(out, "%s: changed: differs from what the profile compiles to; run autonomy compile\n", path)
			printDiff(out, d.Diff)
		}
	}
}

// editedDrift is what check says of a generated file edited by hand, which a plain compile
// refuses to overwrite.
const editedDrift = "edited by hand since autonomy generated it; move the change into the profile, then run autonomy compile --force (a plain compile refuses to overwrite it)"

// printDiff prints a drift's diff, ending its last line.
func printDiff(out io.Writer, diff string) {
	fmt.Fprint(out, diff)
	if n := len(diff); n > 0 && diff[n-1] != '\n' {
		fmt.Fprintln(out)
	}
}
