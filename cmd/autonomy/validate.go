package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/gcfloor"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/registry"
)

// validateReport is one profile's result in --format json.
type validateReport struct {
	Profile     string         `json:"profile"`
	File        string         `json:"file,omitempty"`
	Valid       bool           `json:"valid"`
	Errors      int            `json:"errors"`
	Warnings    int            `json:"warnings"`
	Diagnostics ir.Diagnostics `json:"diagnostics"`
	Failure     string         `json:"failure,omitempty"`
}

func newValidate() *cobra.Command {
	var format string
	var strict, verbose bool
	cmd := &cobra.Command{
		Use:   "validate PROFILE...",
		Short: "Check profiles against the standard and report every problem",
		Long: `validate loads each profile (a directory holding ir.yml, or the file itself) and checks it
against every rule of autonomy.ir.v1. It reports every problem at once, one per line, sorted:

  path:line:col: message (how to fix it)

Each target the profile declares is checked too, as compile would check it: a profile that
validates compiles. Warnings (a deprecated alias, a repeated capability, a feature a target does
not support) are reported and do not fail, unless --strict is given: then a profile with any
warning is not valid.

--format json prints a report per profile; --format github prints each problem as a GitHub
Actions annotation (::error file=…,line=…,col=…::…) for a CI step; --format sarif prints a
SARIF 2.1.0 log for code scanning (github/codeql-action/upload-sarif). The exit code is the same
in every format.
Exit codes: 0 every profile is valid, 1 problems found (or warnings, with --strict), 2 usage or
I/O error.`,
		Example: `  autonomy validate profiles/sdlc
  autonomy validate profiles/*
  autonomy validate --format json profiles/hello
  autonomy validate --strict profiles/release-gate
  autonomy validate --format github profiles/sdlc
  autonomy validate --format sarif profiles/* > autonomy.sarif`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json", "github", "sarif"); err != nil {
				return err
			}
			gcfloor.OneShot()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			reports := make([]validateReport, 0, len(args))
			var findings []cliout.Finding
			code, condensed := exitOK, false
			for _, path := range args {
				rep := validateReport{Profile: path, Diagnostics: ir.Diagnostics{}}
				p, diags, err := checkProfile(path)
				if err != nil {
					rep.Failure = err.Error()
					code = exitUsage
					if format != "json" {
						fmt.Fprintln(errOut, "autonomy:", err)
					}
					reports = append(reports, rep)
					continue
				}
				if p != nil && !diags.HasErrors() {
					td, err := targetChecks(p)
					if err != nil {
						return usageError("%v", err)
					}
					diags = append(diags, td...).Sort()
				}
				if p != nil {
					rep.File = p.File
				} else if len(diags) > 0 {
					rep.File = diags[0].File
				}
				diags = append(diags, reservedPaths(p, "")...).Sort()
				rep.Diagnostics = append(rep.Diagnostics, diags...)
				rep.Errors = diags.Errors()
				rep.Warnings = len(diags) - rep.Errors
				rep.Valid = rep.Errors == 0 && (!strict || rep.Warnings == 0)
				if !rep.Valid && code == exitOK {
					code = exitProblems
				}
				if format == "text" {
					condensed = printDiags(out, diags, verbose) || condensed
				}
				if format == "github" || format == "sarif" {
					findings = append(findings, diagFindings(diags)...) // every finding: one annotation each
				}
				reports = append(reports, rep)
			}
			switch format {
			case "github", "sarif":
				if err := writeFindings(out, format, []cliout.Rule{ruleProfile}, findings); err != nil {
					return err
				}
				summarize(errOut, reports, strict, false)
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Profiles []validateReport `json:"profiles"`
				}{reports}); err != nil {
					return usageError("%v", err)
				}
			default:
				summarize(errOut, reports, strict, condensed)
			}
			if code != exitOK {
				return &exitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json, github (workflow-command annotations) or sarif (SARIF 2.1.0)")
	cmd.Flags().BoolVar(&strict, "strict", false, strictUsage)
	cmd.Flags().BoolVar(&verbose, "verbose", false, verboseUsage)
	return cmd
}

// reservedPaths reports the behaviors and resources of p that an install would put on a path
// autonomy owns, for every target p declares (every registered one when it declares none it
// knows) and the target given on the command line, if any.
func reservedPaths(p *resolved.Profile, target string) ir.Diagnostics {
	if p == nil {
		return nil
	}
	var subs []substrates.Substrate
	add := func(name string) {
		s, ok := registry.Lookup(name)
		if !ok {
			return
		}
		for _, have := range subs {
			if have.Name() == s.Name() {
				return
			}
		}
		subs = append(subs, s)
	}
	for _, t := range p.Targets {
		add(t.Value)
	}
	if len(subs) == 0 {
		subs = registry.All()
	}
	add(target)
	return substrates.CheckPaths(p, subs...)
}

// summarize prints one closing line on stderr so a clean run is visibly clean. strict says
// warnings failed; condensed that repeated warnings were printed once.
func summarize(w io.Writer, reports []validateReport, strict, condensed bool) {
	errs, warns, valid, unread := 0, 0, 0, 0
	for _, r := range reports {
		errs += r.Errors
		warns += r.Warnings
		switch {
		case r.Failure != "":
			unread++
		case r.Valid:
			valid++
		}
	}
	line := fmt.Sprintf("%d of %d %s valid (%s, %s", valid, len(reports), plural(len(reports), "profile", "profiles"),
		count(errs, "error"), count(warns, "warning"))
	if unread > 0 {
		line += fmt.Sprintf(", %d unreadable", unread)
	}
	if strict && warns > 0 {
		line += "; --strict makes warnings fail"
	}
	if condensed {
		line += "; --verbose prints every one"
	}
	fmt.Fprintln(w, line+")")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func count(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, plural(n, noun, noun+"s"))
}
