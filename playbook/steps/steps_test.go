package steps

import (
	"os"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

func TestCases(t *testing.T) { casetest.Run(t, "testdata", casetest.Of(Check), ".md") }

func TestTooLarge(t *testing.T) {
	data := []byte("# Big\n\n## STEP 1: Go\n\n" + strings.Repeat("x", MaxSize))
	p, diags := Check("big.md", data)
	want := "big.md:1:1: the playbook is 200022 bytes; the limit is 200000 bytes (200 KB) (split it into several playbooks)\n"
	if p != nil || diags.String() != want {
		t.Fatalf("got %v\n%s", p, diags)
	}
	// Exactly the limit is fine.
	data = data[:MaxSize]
	if _, diags := Check("big.md", data); diags.HasErrors() {
		t.Fatalf("a playbook of exactly %d bytes is refused:\n%s", MaxSize, diags)
	}
}

// TestParseStructure checks what the parser extracts from the complete example, element by element.
func TestParseStructure(t *testing.T) {
	data, err := os.ReadFile("testdata/good/debt-assessment.md")
	if err != nil {
		t.Fatal(err)
	}
	p, diags := Check("x.md", data)
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	if p.Title.Value != "Technical Debt Assessment" || p.Title.Pos != (ir.Pos{Line: 1, Col: 1}) {
		t.Errorf("title %+v", p.Title)
	}
	if !strings.HasPrefix(p.Description, "Evaluate") || !strings.HasPrefix(p.System.Value, "You are a senior") {
		t.Errorf("description %q system %q", p.Description, p.System.Value)
	}
	if len(p.Inputs) != 4 {
		t.Fatalf("inputs %d", len(p.Inputs))
	}
	depth, max := p.Inputs[1], p.Inputs[2]
	if depth.Type != Enum || strings.Join(depth.Options, "|") != "quick|thorough" || !depth.Required {
		t.Errorf("depth %+v", depth)
	}
	if max.Type != Number || max.Default != "10" || max.Required || max.Name.Pos != (ir.Pos{Line: 15, Col: 4}) {
		t.Errorf("max_items %+v", max)
	}
	if len(p.Steps) != 5 {
		t.Fatalf("steps %d", len(p.Steps))
	}
	s1 := p.Steps[0]
	if s1.Output == nil || s1.Output.Var.Value != "inventory" || !strings.Contains(s1.Prompt, "## STEP 9: not a heading") {
		t.Errorf("step 1 %+v", s1)
	}
	s2 := p.Steps[1]
	if len(s2.Branches) != 2 || s2.Branches[0].Var.Value != "depth" || s2.Branches[0].Value != "thorough" || s2.Branches[1].Kind != "else" {
		t.Fatalf("step 2 branches %+v", s2.Branches)
	}
	if sub := s2.Branches[0].Steps; len(sub) != 1 || sub[0].Label != "2a" || sub[0].Output.Var.Value != "assessment" || sub[0].Prompt != "Analyze every item of the inventory in depth." {
		t.Errorf("sub-step %+v", sub)
	}
	if e := p.Steps[2].Elicit; e == nil || e.Type != ElicitConfirm || e.Prompt != "Does the assessment look right?" {
		t.Errorf("elicit %+v", e)
	}
	if tool := p.Steps[3].Tool; tool == nil || tool.Connection != "tracker" || tool.Name != "list_issues" || !strings.HasPrefix(tool.Args, `{"label"`) {
		t.Errorf("tool %+v", tool)
	}
	if s5 := p.Steps[4]; s5.PromptRef == nil || s5.PromptRef.Value != "library:remediation-plan" || s5.Prompt != "Write the plan, emphasizing {{assessment}}." {
		t.Errorf("step 5 %+v", s5)
	}
	if p.Artifact == nil || p.Artifact.Value != "markdown" {
		t.Errorf("artifact %+v", p.Artifact)
	}
}
