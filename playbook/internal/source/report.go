// Package source holds what the four playbook parsers share: a reporter that produces the
// project's positioned diagnostics (ir.Diagnostic), the split of a file into lines and YAML
// frontmatter with file positions kept, and the YAML node helpers every format decodes with.
package source

import (
	"fmt"

	"github.com/autonomyhq/autonomy/ir"
)

// Reporter collects the diagnostics of one file.
type Reporter struct {
	File  string
	Diags ir.Diagnostics
}

// Errorf reports an error at p; hint says how to fix it.
func (r *Reporter) Errorf(p ir.Pos, hint, format string, args ...any) {
	r.Diags = append(r.Diags, ir.Diagnostic{File: r.File, Pos: fix(p), Severity: ir.Error, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// Warnf reports a warning at p; hint says how to fix it.
func (r *Reporter) Warnf(p ir.Pos, hint, format string, args ...any) {
	r.Diags = append(r.Diags, ir.Diagnostic{File: r.File, Pos: fix(p), Severity: ir.Warning, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// Report reports at p with the given severity.
func (r *Reporter) Report(sev ir.Severity, p ir.Pos, hint, format string, args ...any) {
	r.Diags = append(r.Diags, ir.Diagnostic{File: r.File, Pos: fix(p), Severity: sev, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// fix keeps every diagnostic inside the file: a missing position becomes 1:1.
func fix(p ir.Pos) ir.Pos {
	if p.Line < 1 {
		return ir.Pos{Line: 1, Col: 1}
	}
	if p.Col < 1 {
		p.Col = 1
	}
	return p
}

// YAMLError reports a YAML library error on data, positioned as the profile loader positions its
// own (at the offending line, not at the start of its block).
func (r *Reporter) YAMLError(data []byte, err error) {
	r.Diags = append(r.Diags, ir.YAMLErrorDiagnostics(r.File, data, err)...)
}
