package workflow

import (
	"os"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook/internal/casetest"
)

func TestCases(t *testing.T) {
	casetest.Run(t, "testdata", casetest.Of(Check), ".yml", ".yaml", ".json")
}

func TestParseStructure(t *testing.T) {
	data, err := os.ReadFile("testdata/good/inbox-triage.yml")
	if err != nil {
		t.Fatal(err)
	}
	w, diags := Check("x.yml", data)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if w.Name.Value != "inbox-triage" || len(w.Args) != 2 || w.Args[0].Default.Value != "family" || w.Args[1].Default != nil {
		t.Errorf("workflow %+v args %+v", w, w.Args)
	}
	if len(w.Steps) != 5 {
		t.Fatalf("steps %d", len(w.Steps))
	}
	c := w.Steps[0]
	if c.Namespace != "cli" || c.Rest != "inbox list --json --tag $args.tag" || c.Output.Value != "json" || c.TimeoutMs.Value != 30000 {
		t.Errorf("collect %+v", c)
	}
	if a := w.Steps[2]; !a.IsApproval() || a.Prompt.Value != "Apply these categories?" || a.Pos != (ir.Pos{Line: 18, Col: 5}) {
		t.Errorf("approve %+v", a)
	}
	if e := w.Steps[3]; len(e.Env) != 2 || e.Env[0].Name.Value != "INBOX_TOKEN" || e.Condition.Value != "$approve.approved" {
		t.Errorf("execute %+v", e)
	}
}

// TestSecretNeverEchoed: a diagnostic about a secret literal does not repeat the secret.
func TestSecretNeverEchoed(t *testing.T) {
	diags := casetest.Of(Check)(t, "testdata/bad/secrets.yml")
	for _, s := range []string{"hunter2xyz", "ghp_aaaa", "correct horse", "pa55", "abcdefghijklmnop", "abc123"} {
		if strings.Contains(diags.String(), s) {
			t.Errorf("the diagnostics repeat the secret %q:\n%s", s, diags)
		}
	}
}

func TestTooLarge(t *testing.T) {
	data := []byte("name: big\nsteps: []\n# " + strings.Repeat("x", MaxSize))
	w, diags := Check("big.yml", data)
	if w != nil || len(diags) != 1 || !strings.Contains(diags[0].Message, "the limit is 1048576") {
		t.Fatalf("%v\n%s", w, diags)
	}
}

// TestTimeoutMsDecimal: a timeoutMs with a leading zero is decimal (010 is 10, not octal 8); a
// 0x or 0o prefix still reads as YAML writes it.
func TestTimeoutMsDecimal(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{{"010", 10}, {"0x10", 16}, {"0o10", 8}, {"1_000", 1000}, {"604800000", 604800000}} {
		w, diags := Check("t.yml", []byte("name: t\nsteps:\n  - id: a\n    command: cli true\n    timeoutMs: "+c.text+"\n"))
		if len(diags) > 0 || w.Steps[0].TimeoutMs.Value != c.want {
			t.Errorf("timeoutMs: %s read as %d (want %d)\n%s", c.text, w.Steps[0].TimeoutMs.Value, c.want, diags)
		}
	}
}
