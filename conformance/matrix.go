package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
)

// Feature is one row of the support matrix: a catalog entry or a profile feature, named as
// substrates declare support for it (substrates.Support.Feature).
type Feature struct {
	Name string `json:"feature"`
	// Group is the catalog or part of the standard it belongs to.
	Group string `json:"group"`
	// probe is the YAML of a profile's actors (and policy) that uses the feature.
	probe string
}

// Features lists every row of the matrix, in the standard's order: the nine capabilities and
// their scope, the three trigger kinds, the five param sources, the human kind, the actor fields,
// and maxConcurrent. It is built from the ir catalogs, so a new catalog entry becomes a row.
func Features() []Feature {
	var fs []Feature
	for _, c := range ir.Capabilities {
		probe := fmt.Sprintf(probeAgent, "capabilities: ["+c.Name+"]\n    triggers: [{ dispatch: true }]")
		fs = append(fs, Feature{Name: "capability:" + c.Name, Group: "capabilities", probe: probe})
	}
	fs = append(fs, Feature{Name: "capability:@scope", Group: "capabilities",
		probe: fmt.Sprintf(probeAgent, "capabilities: [agent:launch@other, tasks:author@docs]\n    triggers: [{ dispatch: true }]") + probeOther})
	fs = append(fs,
		Feature{Name: "trigger:cron", Group: "triggers", probe: fmt.Sprintf(probeAgent, `triggers: [{ cron: "17 6 * * 1-5" }]`)},
		Feature{Name: "trigger:dispatch", Group: "triggers", probe: fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true, params: { PROBE_REF: subject.ref } }]")},
		Feature{Name: "trigger:event", Group: "triggers", probe: fmt.Sprintf(probeAgent, "triggers: [{ event: issues, config: { types: [labeled] } }]")},
	)
	for _, s := range ir.Sources {
		probe := fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true, params: { PROBE_PARAM: "+s.Name+" } }]")
		fs = append(fs, Feature{Name: "source:" + s.Name, Group: "param sources", probe: probe})
	}
	fs = append(fs,
		Feature{Name: "kind:human", Group: "actors", probe: probeHuman},
		Feature{Name: "field:timeout", Group: "actor fields", probe: fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true }]\n    timeout: 7")},
		Feature{Name: "field:review", Group: "actor fields", probe: fmt.Sprintf(probeAgent, "capabilities: [code:propose]\n    triggers: [{ dispatch: true }]\n    review: other") + probeReviewer},
		Feature{Name: "field:result", Group: "actor fields", probe: fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true }]\n    result: { schema: { type: object, required: [verdict] } }")},
		Feature{Name: "field:execution", Group: "actor fields", probe: fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true }]\n    execution: { workspace: isolated }")},
		Feature{Name: "field:prelaunch", Group: "actor fields", probe: fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true }]\n    prelaunch: \"git fetch --quiet\"")},
		Feature{Name: "policy:maxConcurrent", Group: "policy", probe: fmt.Sprintf(probeAgent, "triggers: [{ dispatch: true }]") + "policy:\n  maxConcurrent: 3\n"},
	)
	return fs
}

// The probe profiles: one agent "probe" (the feature's fragment goes in its %s), plus the actors a
// feature needs beside it.
const (
	probeHeader = "schema: autonomy.ir.v1\ntargets: [%s]\nactors:\n"
	probeAgent  = "  probe:\n    behavior: scripts/run.sh\n    %s\n"
	probeOther  = "  other:\n    behavior: scripts/run.sh\n    triggers: [{ dispatch: true }]\n"
	// The reviewer of field:review holds code:review, as the validator requires.
	probeReviewer = "  other:\n    behavior: scripts/run.sh\n    capabilities: [code:review]\n    triggers: [{ dispatch: true }]\n"
	probeHuman    = "  probe:\n    kind: human\n    behavior: humans/ask.md\n    triggers: [{ dispatch: true, params: { PROBE_REF: subject.ref } }]\n"
)

// Cell is one feature on one substrate: the substrate's declaration and what its probe compile
// showed.
type Cell struct {
	Feature   string           `json:"feature"`
	Substrate string           `json:"substrate"`
	Level     substrates.Level `json:"level"`
	// Realization is the substrate's one line on how it realizes the feature, or what it lacks.
	Realization string `json:"realization"`
	// Verified is set when the probe compile bore the declaration out; Problem says how it did
	// not (a battery failure).
	Verified bool   `json:"verified"`
	Problem  string `json:"problem,omitempty"`
	// Observed names the battery's checks that observed the feature behave on a runner of the
	// substrate ("CHECK on RUNNER"); DeclaredOnly says why a supported or partial feature was
	// not observed, and stands on its declaration and probe compile alone (Observe).
	Observed     []string `json:"observed,omitempty"`
	DeclaredOnly string   `json:"declaredOnly,omitempty"`
}

// Matrix compiles a probe profile per feature with each substrate and checks the declaration
// against the output: a supported or partial feature must be realized in the files (Realized),
// and any feature not fully supported must draw compile's warning at the place it is used, read
// from the same declaration. scratch is a directory for the probe profiles.
func Matrix(subs []substrates.Substrate, scratch string) ([]Cell, error) {
	var cells []Cell
	for i, f := range Features() {
		dir := filepath.Join(scratch, fmt.Sprintf("probe-%02d", i))
		p, err := writeProbe(dir, f, subs)
		if err != nil {
			return nil, fmt.Errorf("the probe profile of %s: %w", f.Name, err)
		}
		for _, s := range subs {
			cells = append(cells, matrixCell(s, f, p, dir))
		}
	}
	return cells, nil
}

// writeProbe writes and loads the probe profile of f. A feature the validator refuses (code:merge,
// gate-only) has no profile: it returns nil. The profile declares the substrates under test.
func writeProbe(dir string, f Feature, subs []substrates.Substrate) (*ir.Profile, error) {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.Name()
	}
	files := map[string]string{
		"ir.yml":         fmt.Sprintf(probeHeader, strings.Join(names, ", ")) + f.probe,
		"scripts/run.sh": "#!/bin/sh\nexit 0\n",
		"humans/ask.md":  "# The ask\n\nSituation, decision, result.\n",
	}
	for name, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			return nil, err
		}
	}
	p, diags, err := ir.Check(dir)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, nil
	}
	return p, nil
}

func matrixCell(s substrates.Substrate, f Feature, p *ir.Profile, dir string) Cell {
	c := Cell{Feature: f.Name, Substrate: s.Name(), Level: substrates.Unsupported}
	i := slices.IndexFunc(s.Support(), func(sp substrates.Support) bool { return sp.Feature == f.Name })
	if i < 0 {
		c.Realization = "not declared"
		c.Problem = fmt.Sprintf("%s does not declare %s: every catalog entry needs a declared level", s.Name(), f.Name)
		return c
	}
	sp := s.Support()[i]
	c.Level, c.Realization = sp.Level, sp.Note
	if p == nil {
		// The validator refuses every profile using it: nothing can compile, whatever the level.
		if sp.Level != substrates.Unsupported {
			c.Problem = fmt.Sprintf("declared %s, but the standard's validator refuses every profile that uses it", sp.Level)
			return c
		}
		c.Verified = true
		return c
	}
	r, _ := playbook.Resolve(p) // the probe profiles hold no playbook
	out, err := substrates.Compile(s, r, dir)
	if err != nil {
		c.Problem = fmt.Sprintf("the probe profile does not compile: %v", err)
		return c
	}
	if sp.Level != substrates.Supported {
		if !warned(p, out, f.Name) {
			c.Problem = fmt.Sprintf("declared %s, but compiling a profile that uses it gives no warning where it is used", sp.Level)
			return c
		}
	}
	if sp.Level != substrates.Unsupported {
		if err := Realized(s, f.Name, out); err != nil {
			c.Problem = fmt.Sprintf("declared %s, but the probe compile does not realize it: %v", sp.Level, err)
			return c
		}
	}
	c.Verified = true
	return c
}

// warned reports whether out warns at a place p uses the feature.
func warned(p *ir.Profile, out substrates.Output, feature string) bool {
	for _, u := range substrates.UsedFeatures(p) {
		if u.Feature != feature {
			continue
		}
		for _, w := range out.Warnings {
			if w.Severity == ir.Warning && w.Pos == u.Pos {
				return true
			}
		}
	}
	return false
}
