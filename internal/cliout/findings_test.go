package cliout

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/cliout/sariftest"
)

func TestWriteGitHubEscapes(t *testing.T) {
	var b bytes.Buffer
	err := WriteGitHub(&b, []Finding{
		{File: "a,b:c.yml", Line: 3, Col: 4, Level: "error", Message: "100% bad\n::error::injected", Rule: "profile"},
		{File: "x.yml", Level: "warning", Message: "w", Rule: "profile"},
		{Level: "note", Message: "n", Rule: "drift"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "::error file=a%2Cb%3Ac.yml,line=3,col=4,title=autonomy profile::100%25 bad%0A::error::injected\n" +
		"::warning file=x.yml,title=autonomy profile::w\n" +
		"::notice title=autonomy drift::n\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWriteSARIFFollowsTheSpec checks a log against the rules of SARIF 2.1.0 (OASIS standard,
// §3.13 sarifLog, §3.14 run, §3.18-19 tool and toolComponent, §3.27 result, §3.28 location,
// §3.29 physicalLocation, §3.4 artifactLocation, §3.30 region, §3.49 reportingDescriptor) that a
// consumer relies on.
func TestWriteSARIFFollowsTheSpec(t *testing.T) {
	var b bytes.Buffer
	rules := []Rule{{ID: "profile", Description: "p"}, {ID: "drift", Description: "d"}}
	findings := []Finding{
		{File: "profiles/my fleet/ir.yml", Line: 12, Col: 7, Level: "error", Message: "bad", Rule: "profile"},
		{File: "/abs/.github/workflows/x.yml", Level: "error", Message: "changed", Rule: "drift"},
		{File: "c:odd/ir.yml", Line: 1, Level: "warning", Message: "w", Rule: "profile"},
		{Level: "note", Message: "no file", Rule: "profile"},
	}
	if err := WriteSARIF(&b, Tool{Name: "autonomy", Version: "v1.0.0"}, rules, findings); err != nil {
		t.Fatal(err)
	}
	checkSARIF(t, b.Bytes(), len(findings))
	if !strings.Contains(b.String(), `"uri": "profiles/my%20fleet/ir.yml"`) || !strings.Contains(b.String(), `"uri": "file:///abs/.github/workflows/x.yml"`) {
		t.Errorf("artifact URIs:\n%s", b.String())
	}
}

// checkSARIF validates data as a SARIF 2.1.0 log with wantResults results: against the official
// schema, then against the rules of the spec a schema cannot state.
func checkSARIF(t *testing.T, data []byte, wantResults int) {
	t.Helper()
	if err := sariftest.Validate(data); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver *struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results *[]struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine   int  `json:"startLine"`
							StartColumn *int `json:"startColumn"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&log); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if log.Version != "2.1.0" || !strings.HasPrefix(log.Schema, "https://") {
		t.Errorf("version %q, $schema %q", log.Version, log.Schema)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs", len(log.Runs))
	}
	run := log.Runs[0]
	if run.Tool.Driver == nil || run.Tool.Driver.Name == "" {
		t.Fatal("tool.driver.name is required")
	}
	ids := map[string]bool{}
	for _, r := range run.Tool.Driver.Rules {
		if r.ID == "" || ids[r.ID] {
			t.Errorf("rule id %q empty or repeated", r.ID)
		}
		ids[r.ID] = true
	}
	if run.Results == nil || len(*run.Results) != wantResults {
		t.Fatalf("results: %v, want %d", run.Results, wantResults)
	}
	for i, r := range *run.Results {
		if r.Message.Text == "" {
			t.Errorf("result %d: message.text is required", i)
		}
		switch r.Level {
		case "none", "note", "warning", "error":
		default:
			t.Errorf("result %d: level %q", i, r.Level)
		}
		if r.RuleIndex != nil && (*r.RuleIndex < 0 || *r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[*r.RuleIndex].ID != r.RuleID) {
			t.Errorf("result %d: ruleIndex %d does not name rule %q", i, *r.RuleIndex, r.RuleID)
		}
		if !ids[r.RuleID] {
			t.Errorf("result %d: ruleId %q is not a rule of the driver", i, r.RuleID)
		}
		for _, l := range r.Locations {
			u, err := url.Parse(l.PhysicalLocation.ArtifactLocation.URI)
			if err != nil || l.PhysicalLocation.ArtifactLocation.URI == "" || u.Scheme != "" && u.Scheme != "file" {
				t.Errorf("result %d: uri %q is not a URI reference to a file (%v)", i, l.PhysicalLocation.ArtifactLocation.URI, err)
			}
			if reg := l.PhysicalLocation.Region; reg != nil && (reg.StartLine < 1 || reg.StartColumn != nil && *reg.StartColumn < 1) {
				t.Errorf("result %d: region %+v", i, *reg)
			}
		}
	}
}

func TestFileURI(t *testing.T) {
	for in, want := range map[string]string{
		"profiles/x/ir.yml": "profiles/x/ir.yml",
		"a b/ir.yml":        "a%20b/ir.yml",
		"c:odd/ir.yml":      "./c:odd/ir.yml",
		"/abs/x.yml":        "file:///abs/x.yml",
		`dir\x.yml`:         "dir/x.yml",
		"./x/../y.yml":      "y.yml",
	} {
		if got := fileURI(in); got != want {
			t.Errorf("fileURI(%q) = %q, want %q", in, got, want)
		}
	}
}
