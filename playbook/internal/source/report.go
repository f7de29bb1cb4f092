// Package source holds what the four playbook parsers share: a reporter that produces the
// project's positioned diagnostics (ir.Diagnostic), the split of a file into lines and YAML
// frontmatter with file positions kept, and the YAML node helpers every format decodes with.
package source

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

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

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// YAMLError reports a YAML library error; def is where to point when the error names no line.
func (r *Reporter) YAMLError(err error, def ir.Pos) {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, e := range te.Errors {
			r.YAMLError(errors.New(e), def)
		}
		return
	}
	msg, at := err.Error(), def
	if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg, at = m[2], ir.Pos{Line: line, Col: 1}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	hint := ""
	if strings.Contains(msg, "cannot start any token") {
		hint = "indent with spaces, and quote a value that starts with a special character such as * or @"
	}
	r.Errorf(at, hint, "YAML syntax error: %s", msg)
}
