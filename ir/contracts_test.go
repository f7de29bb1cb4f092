package ir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResultContracts checks result files against each named contract: testdata/results/<contract>/
// valid-*.json satisfy it; every other NAME.json fails it with exactly the diagnostics of NAME.out,
// positions pinned in the result file.
func TestResultContracts(t *testing.T) {
	for _, name := range ContractNames() {
		files, err := filepath.Glob(filepath.Join("testdata/results", name, "*.json"))
		if err != nil || len(files) < 3 {
			t.Fatalf("%s: too few cases: %v %v", name, files, err)
		}
		res := &Result{Named: String{Value: name}}
		valid, invalid := 0, 0
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			diags, err := ValidateResult(res, file, data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			base := filepath.Base(file)
			if strings.HasPrefix(base, "valid-") {
				valid++
				if len(diags) != 0 {
					t.Errorf("%s: a valid result is refused:\n%s", file, diags)
				}
				continue
			}
			invalid++
			outFile := strings.TrimSuffix(file, ".json") + ".out"
			if *update {
				if err := os.WriteFile(outFile, []byte(diags.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(outFile)
			if err != nil {
				t.Fatalf("missing expected output: %v", err)
			}
			if len(diags) == 0 || diags.String() != string(want) {
				t.Errorf("%s:\n--- got\n%s--- want\n%s", file, diags, want)
			}
		}
		if valid == 0 || invalid == 0 {
			t.Errorf("%s: %d valid and %d invalid cases; want both", name, valid, invalid)
		}
	}
}

// TestReviewContractsAreDistinct: each contract refuses the other's verdict.
func TestReviewContractsAreDistinct(t *testing.T) {
	if ResultContracts[ReviewContract] == ResultContracts[ReferenceReviewContract] {
		t.Fatal("the two review contracts are one")
	}
	for contract, other := range map[string]string{
		ReviewContract:          "testdata/results/open-autonomy.review.v1/valid-approved.json",
		ReferenceReviewContract: "testdata/results/autonomy.review.v1/valid-approve.json",
	} {
		data, err := os.ReadFile(other)
		if err != nil {
			t.Fatal(err)
		}
		diags, err := ValidateResult(&Result{Named: String{Value: contract}}, other, data)
		if err != nil || len(diags) == 0 {
			t.Errorf("%s accepts %s: %v", contract, other, err)
		}
	}
}

// TestContractDefault: an agent that runs a skill and declares no result delivers the default
// contract, and so does a script; one that opts out and a person deliver none; a declared one is kept.
func TestContractDefault(t *testing.T) {
	none := &Result{Named: String{Value: NoResult}}
	review := &Result{Named: String{Value: ReviewContract}}
	for _, c := range []struct {
		name string
		a    Actor
		want string
	}{
		{"skill", Actor{Skill: true}, DefaultContract},
		{"declared", Actor{Skill: true, Result: review}, ReviewContract},
		{"opt-out", Actor{Skill: true, Result: none}, ""},
		{"script", Actor{}, DefaultContract},
		{"script opt-out", Actor{Result: none}, ""},
		{"human", Actor{Kind: String{Value: "human"}}, ""},
	} {
		got := ""
		if r := c.a.Contract(); r != nil {
			got = r.Named.Value
		}
		if got != c.want {
			t.Errorf("%s: contract %q, want %q", c.name, got, c.want)
		}
		if c.a.ExitStatusOnly() != strings.HasSuffix(c.name, "opt-out") {
			t.Errorf("%s: ExitStatusOnly %v", c.name, c.a.ExitStatusOnly())
		}
	}
}
