package overlay

import (
	"os"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

func TestCases(t *testing.T) { casetest.Run(t, "testdata", casetest.Of(Check), ".md") }

func TestParseStructure(t *testing.T) {
	data, _ := os.ReadFile("testdata/good/flag-contradictions.md")
	o, diags := Check("x.md", data)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if o.Priority.Value != 70 || len(o.Targets) != 2 || o.Targets[1].Pattern() != "operator/*" || o.Targets[0].Pattern() != "role/librarian" {
		t.Errorf("%+v", o)
	}
	if o.Body[:2] != "# " || o.BodyPos != (ir.Pos{Line: 26, Col: 1}) || o.TTL.Value != "P30D" || o.UpdatedAt.Value != "2026-06-01T12:00:00Z" {
		t.Errorf("body at %v ttl %q updated %q", o.BodyPos, o.TTL.Value, o.UpdatedAt.Value)
	}
	data, _ = os.ReadFile("testdata/good/tone-block.md")
	o, _ = Check("y.md", data)
	if o.Priority.Value != DefaultPriority || o.Priority.Pos.IsSet() || o.Block.Value != "tone" {
		t.Errorf("%+v", o)
	}
}
