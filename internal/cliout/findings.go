package cliout

import (
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/autonomyhq/autonomy/internal/exitcode"
)

// Finding is one problem a command reports, as the machine formats (GitHub annotations, SARIF)
// carry it.
type Finding struct {
	// File is the file the problem is in, as the command names it (slash-separated).
	File string
	// Line and Col are 1-based; 0 when the problem has no position.
	Line, Col int
	// Level is "error", "warning" or "note".
	Level string
	// Message says what is wrong and how to fix it.
	Message string
	// Rule is the SARIF rule id: one of the Rules given to WriteSARIF.
	Rule string
}

// Rule is one kind of finding, for SARIF's tool.driver.rules.
type Rule struct {
	ID, Description string
}

// WriteGitHub writes each finding as a GitHub Actions workflow command (::error, ::warning or
// ::notice), which the runner turns into an annotation on the file and line. The message and
// the properties are escaped as the runner's toolkit does, so no text can end the command early
// or start another one.
func WriteGitHub(w io.Writer, findings []Finding) error {
	var b strings.Builder
	for _, f := range findings {
		cmd := "error"
		switch f.Level {
		case "warning":
			cmd = "warning"
		case "note":
			cmd = "notice"
		}
		b.WriteString("::" + cmd)
		var props []string
		if f.File != "" {
			props = append(props, "file="+escapeProperty(f.File))
			if f.Line > 0 {
				props = append(props, "line="+strconv.Itoa(f.Line))
				if f.Col > 0 {
					props = append(props, "col="+strconv.Itoa(f.Col))
				}
			}
		}
		props = append(props, "title="+escapeProperty("autonomy "+f.Rule))
		b.WriteString(" " + strings.Join(props, ","))
		b.WriteString("::" + escapeData(f.Message) + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return exitcode.Usagef("%v", err)
	}
	return nil
}

// escapeData escapes a workflow command's message (@actions/core's escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value (@actions/core's escapeProperty).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// SARIFVersion and SARIFSchema are the SARIF version WriteSARIF writes and its schema's URI.
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// Tool names the program in a SARIF log.
type Tool struct {
	Name, Version, InformationURI string
}

// WriteSARIF writes a SARIF 2.1.0 log of one run of tool with findings, for code scanning (GitHub
// upload-sarif) and editors. Every finding's Rule must be one of rules.
func WriteSARIF(w io.Writer, tool Tool, rules []Rule, findings []Finding) error {
	type obj = map[string]any
	index := map[string]int{}
	ruleObjs := make([]obj, len(rules))
	for i, r := range rules {
		index[r.ID] = i
		ruleObjs[i] = obj{"id": r.ID, "shortDescription": obj{"text": r.Description}}
	}
	results := make([]obj, 0, len(findings))
	for _, f := range findings {
		level := f.Level
		if level != "error" && level != "warning" {
			level = "note"
		}
		res := obj{"ruleId": f.Rule, "level": level, "message": obj{"text": f.Message}}
		if i, ok := index[f.Rule]; ok {
			res["ruleIndex"] = i
		}
		if f.File != "" {
			loc := obj{"artifactLocation": obj{"uri": fileURI(f.File)}}
			if f.Line > 0 {
				region := obj{"startLine": f.Line}
				if f.Col > 0 {
					region["startColumn"] = f.Col
				}
				loc["region"] = region
			}
			res["locations"] = []obj{{"physicalLocation": loc}}
		}
		results = append(results, res)
	}
	driver := obj{"name": tool.Name, "rules": ruleObjs}
	if tool.Version != "" {
		driver["version"] = tool.Version
	}
	if tool.InformationURI != "" {
		driver["informationUri"] = tool.InformationURI
	}
	log := obj{
		"$schema": SARIFSchema,
		"version": SARIFVersion,
		"runs":    []obj{{"tool": obj{"driver": driver}, "results": results}},
	}
	return WriteJSON(w, log)
}

// fileURI is a file path as a SARIF artifact URI: a relative reference with its special
// characters escaped ("./" before a first segment with a colon, which would read as a scheme),
// or a file: URI for an absolute path.
func fileURI(p string) string {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	u := url.URL{Path: p}
	if strings.HasPrefix(p, "/") {
		u.Scheme = "file"
	}
	return u.String()
}
