package main

import (
	"io"
	"path/filepath"

	"github.com/autonomyhq/autonomy/internal/buildinfo"
	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// The SARIF rules: a problem of a profile (validate, and the warnings check prints) and a
// generated file that drifted (check).
var (
	ruleProfile = cliout.Rule{ID: "profile", Description: "a problem in a profile, against autonomy.ir.v1 and the targets it declares"}
	ruleDrift   = cliout.Rule{ID: "drift", Description: "a generated file that differs from what the profile compiles to"}
)

// sarifTool is this build of autonomy in a SARIF log.
func sarifTool() cliout.Tool {
	return cliout.Tool{Name: "autonomy", Version: buildinfo.Read().String(), InformationURI: "https://github.com/autonomyhq/autonomy"}
}

// diagFindings converts diagnostics, each with its hint, to findings.
func diagFindings(diags ir.Diagnostics) []cliout.Finding {
	out := make([]cliout.Finding, 0, len(diags))
	for _, d := range diags {
		level := "error"
		if d.Severity == ir.Warning {
			level = "warning"
		}
		msg := d.Message
		if d.Hint != "" {
			msg += " (" + d.Hint + ")"
		}
		out = append(out, cliout.Finding{File: filepath.ToSlash(d.File), Line: d.Pos.Line, Col: d.Pos.Col, Level: level, Message: msg, Rule: ruleProfile.ID})
	}
	return out
}

// driftFindings converts check's drift to findings on the installed files.
func driftFindings(drifts []substrates.Drift, dir string) []cliout.Finding {
	out := make([]cliout.Finding, 0, len(drifts))
	for _, d := range drifts {
		msg := "the generated file " + d.Kind.String()
		switch d.Kind {
		case substrates.Missing:
			msg = "missing: the profile generates it; run autonomy compile"
		case substrates.Stale:
			msg = "stale: generated before, the profile no longer produces it; run autonomy compile to delete it"
		case substrates.Changed:
			msg = "changed: it differs from what the profile compiles to; run autonomy compile (autonomy check prints the diff)"
			if d.Edited {
				msg = "changed: " + editedDrift + " (autonomy check prints the diff)"
			}
		}
		out = append(out, cliout.Finding{File: filepath.ToSlash(filepath.Join(dir, d.Path)), Level: "error", Message: msg, Rule: ruleDrift.ID})
	}
	return out
}

// writeFindings prints findings as --format github or sarif asks.
func writeFindings(w io.Writer, format string, rules []cliout.Rule, findings []cliout.Finding) error {
	if format == "github" {
		return cliout.WriteGitHub(w, findings)
	}
	return cliout.WriteSARIF(w, sarifTool(), rules, findings)
}
