package substrates

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/ir/resolved"
)

// usesProfile uses one of almost every feature; the positions in TestUsedFeatures point into it.
const usesProfile = `schema: autonomy.ir.v1
targets: [fake]
actors:
  dev:
    behavior: skills/dev
    capabilities: [code:propose, tasks:author@backlog]
    triggers:
      - cron: "0 * * * *"
        params: { REF: subject.ref, WHO: subject.actor }
      - cron: "30 * * * *"
      - event: issue_comment
    timeout: 10
    review: rev
    result: { schema: autonomy.review.v1 }
    execution: { workspace: isolated }
    prelaunch: make setup
  rev:
    kind: human
    behavior: humans/rev
    capabilities: [code:review]
    triggers:
      - dispatch: true
        params: { REF: subject.ref }
policy:
  maxConcurrent: 2
`

// parseProfile parses usesProfile as the file dir/p/ir.yml and validates it, which sets the
// trigger kinds; the validation errors (no skill folders on disk) do not matter here.
func parseProfile(t *testing.T, dir, text string) *ir.Profile {
	t.Helper()
	p, _ := ir.Parse(filepath.Join(dir, "p", "ir.yml"), filepath.Join(dir, "p"), []byte(text))
	if p == nil {
		t.Fatal("profile did not parse")
	}
	ir.Validate(p)
	return p
}

func TestUsedFeatures(t *testing.T) {
	p := parseProfile(t, t.TempDir(), usesProfile)
	want := []Use{
		{"capability:code:propose", ir.Pos{Line: 6, Col: 20}, "dev", ""},
		{"capability:tasks:author", ir.Pos{Line: 6, Col: 34}, "dev", ""},
		{"capability:@scope", ir.Pos{Line: 6, Col: 34}, "dev", "tasks:author"},
		{"trigger:cron", ir.Pos{Line: 8, Col: 9}, "dev", ""},
		{"source:subject.ref", ir.Pos{Line: 9, Col: 24}, "dev", ""},
		{"source:subject.actor", ir.Pos{Line: 9, Col: 42}, "dev", ""},
		{"trigger:cron", ir.Pos{Line: 10, Col: 9}, "dev", ""},
		{"trigger:event", ir.Pos{Line: 11, Col: 9}, "dev", ""},
		{"field:timeout", ir.Pos{Line: 12, Col: 14}, "dev", ""},
		{"field:review", ir.Pos{Line: 13, Col: 13}, "dev", ""},
		{"field:result", ir.Pos{Line: 14, Col: 13}, "dev", ""},
		{"field:execution", ir.Pos{Line: 15, Col: 5}, "dev", ""},
		{"field:prelaunch", ir.Pos{Line: 16, Col: 16}, "dev", ""},
		{"kind:human", ir.Pos{Line: 18, Col: 11}, "rev", ""},
		{"capability:code:review", ir.Pos{Line: 20, Col: 20}, "rev", ""},
		{"trigger:dispatch", ir.Pos{Line: 22, Col: 9}, "rev", ""},
		{"source:subject.ref", ir.Pos{Line: 23, Col: 24}, "rev", ""},
		{"policy:maxConcurrent", ir.Pos{Line: 25, Col: 18}, "", ""},
	}
	if got := UsedFeatures(p); !reflect.DeepEqual(got, want) {
		t.Errorf("UsedFeatures:\n%v\nwant:\n%v", got, want)
	}
}

func TestUsedFeaturesOfAProfileBuiltInCode(t *testing.T) {
	// No positions at all: a set value still counts as used, and a human's kind falls back to
	// where its name is.
	p := &ir.Profile{
		Actors: []*ir.Actor{{
			Name:     ir.String{Value: "h", Pos: ir.Pos{Line: 3, Col: 3}},
			Kind:     ir.String{Value: "human"},
			Triggers: []*ir.Trigger{{Dispatch: ir.String{Value: "true", Pos: ir.Pos{Line: 5, Col: 9}}}},
			Timeout:  ir.Int{Value: 5},
		}},
		Policy: ir.Policy{MaxConcurrent: ir.Int{Value: 1}},
	}
	want := []Use{
		{"kind:human", ir.Pos{Line: 3, Col: 3}, "h", ""},
		{"trigger:dispatch", ir.Pos{}, "h", ""},
		{"field:timeout", ir.Pos{}, "h", ""},
		{"policy:maxConcurrent", ir.Pos{}, "", ""},
	}
	if got := UsedFeatures(p); !reflect.DeepEqual(got, want) {
		t.Errorf("UsedFeatures:\n%v\nwant:\n%v", got, want)
	}
	if got := UsedFeatures(&ir.Profile{}); len(got) != 0 {
		t.Errorf("an empty profile uses %v", got)
	}
}

func TestCompileWarnsFromTheSupportDeclaration(t *testing.T) {
	dir := t.TempDir()
	p := parseProfile(t, dir, usesProfile)
	s := &fakeSubstrate{name: "fake", out: Output{Target: "fake"}, support: []Support{
		{Feature: "capability:code:propose", Level: Supported},
		{Feature: "capability:code:review", Level: Supported},
		{Feature: "capability:tasks:author", Level: Supported},
		{Feature: "capability:@scope", Level: Partial, Note: "scopes are recorded, not enforced"},
		{Feature: "trigger:cron", Level: Partial, Note: "runs on UTC"},
		{Feature: "trigger:event", Level: Supported},
		{Feature: "trigger:dispatch", Level: Supported},
		{Feature: "source:subject.ref", Level: Partial, Note: "a number only"},
		{Feature: "source:subject.actor", Level: Unsupported, Note: "forward subject.ref instead"},
		{Feature: "kind:human", Level: Supported},
		{Feature: "field:timeout", Level: Supported},
		{Feature: "field:review", Level: Supported},
		{Feature: "field:result", Level: Supported},
		{Feature: "field:execution", Level: Partial},
		// field:prelaunch is not declared at all.
		{Feature: "policy:maxConcurrent", Level: Unsupported, Note: "GitHub decides"},
	}}
	out, err := Compile(s, resolved.Of(p), dir)
	if err != nil {
		t.Fatal(err)
	}
	// trigger:cron is used twice by dev and warned once; source:subject.ref once per actor.
	file := p.File
	want := ir.Diagnostics{
		{File: file, Pos: ir.Pos{Line: 6, Col: 34}, Severity: ir.Warning, Message: `actor "dev": fake partial capability:@scope: scopes are recorded, not enforced`},
		{File: file, Pos: ir.Pos{Line: 8, Col: 9}, Severity: ir.Warning, Message: `actor "dev": fake partial trigger:cron: runs on UTC`},
		{File: file, Pos: ir.Pos{Line: 9, Col: 24}, Severity: ir.Warning, Message: `actor "dev": fake partial source:subject.ref: a number only`},
		{File: file, Pos: ir.Pos{Line: 9, Col: 42}, Severity: ir.Warning, Message: `actor "dev": fake unsupported source:subject.actor: forward subject.ref instead`},
		{File: file, Pos: ir.Pos{Line: 15, Col: 5}, Severity: ir.Warning, Message: `actor "dev": fake partial field:execution`},
		{File: file, Pos: ir.Pos{Line: 16, Col: 16}, Severity: ir.Warning, Message: `actor "dev": fake unsupported field:prelaunch: not declared by this substrate`},
		{File: file, Pos: ir.Pos{Line: 23, Col: 24}, Severity: ir.Warning, Message: `actor "rev": fake partial source:subject.ref: a number only`},
		{File: file, Pos: ir.Pos{Line: 25, Col: 18}, Severity: ir.Warning, Message: `fake unsupported policy:maxConcurrent: GitHub decides`},
	}
	if !reflect.DeepEqual(out.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", out.Warnings, want)
	}
}

// A substrate that enforces a capability's scope in full (ScopeEnforcer) is not warned of that
// scope, and is of the others (newc11: local warned of an agent:launch scope it enforces, so
// validate --strict failed a profile whose only scope is enforced).
func TestCompileWarnsOfNoScopeTheSubstrateEnforces(t *testing.T) {
	dir := t.TempDir()
	p := parseProfile(t, dir, "schema: autonomy.ir.v1\ntargets: [fake]\nactors:\n  dev:\n    behavior: skills/dev\n    capabilities: [agent:launch@rev, tasks:author@backlog]\n    triggers: [{ dispatch: true }]\n  rev:\n    behavior: skills/rev\n    triggers: [{ dispatch: true }]\n")
	support := []Support{
		{Feature: "capability:agent:launch", Level: Supported},
		{Feature: "capability:tasks:author", Level: Supported},
		{Feature: "capability:@scope", Level: Partial, Note: "some scopes"},
		{Feature: "trigger:dispatch", Level: Supported},
	}
	launch, author := ir.Pos{Line: 6, Col: 20}, ir.Pos{Line: 6, Col: 38} // agent:launch@rev, tasks:author@backlog
	for enforced, want := range map[string][]ir.Pos{"": {launch}, "agent:launch": {author}, "tasks:author": {launch}, "code:review": {launch}} {
		fake := fakeSubstrate{name: "fake", out: Output{Target: "fake"}, support: support}
		var sub Substrate = &fake
		if enforced != "" {
			sub = &scopeEnforcing{fakeSubstrate: fake, enforced: enforced}
		}
		out, err := Compile(sub, resolved.Of(p), dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []ir.Pos
		for _, d := range out.Warnings {
			if strings.Contains(d.Message, "capability:@scope") {
				got = append(got, d.Pos)
			}
		}
		if !reflect.DeepEqual(got, want) || len(out.Warnings) != len(got) {
			t.Errorf("enforcing %q: warnings\n%s\nwant the scope's at %v", enforced, out.Warnings, want)
		}
	}
}

// scopeEnforcing is a fakeSubstrate that enforces the scope of one capability.
type scopeEnforcing struct {
	fakeSubstrate
	enforced string
}

func (s *scopeEnforcing) EnforcesScope(c string) bool { return c == s.enforced }

func TestCompileStampsAndSorts(t *testing.T) {
	dir := t.TempDir()
	outDir := filepath.Join(dir, "repo")
	p := parseProfile(t, dir, "schema: autonomy.ir.v1\n")
	substrateWarning := ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: 9, Col: 1}, Severity: ir.Warning, Message: "from the substrate"}
	files := []File{
		{Path: "a.yml", Data: []byte(yamlBody), Mode: 0o644, Header: HashHeader},
		{Path: "b.json", Data: []byte(jsonBody), Mode: 0o644, Header: JSONHeader},
		{Path: "c.md", Data: []byte("verbatim\n"), Mode: 0o644},
	}
	s := &fakeSubstrate{name: "fake", out: Output{Files: files, Warnings: ir.Diagnostics{substrateWarning}}}
	out, err := Compile(s, resolved.Of(p), outDir)
	if err != nil {
		t.Fatal(err)
	}
	if s.calls != 1 {
		t.Errorf("the substrate compiled %d times", s.calls)
	}
	if out.Target != "fake" {
		t.Errorf("target %q, want the substrate's name", out.Target)
	}
	wantA := "# DO NOT EDIT. Generated by autonomy from p/ir.yml; edit the profile and compile again.\n# sha256 " + yamlHash + "\n" + yamlBody
	if got := string(out.Files[0].Data); got != wantA {
		t.Errorf("a.yml:\n%s\nwant:\n%s", got, wantA)
	}
	if h, ok := ReadHeader(out.Files[1].Data); !ok || !h.Intact || h.Source != "p/ir.yml" || h.Style != JSONHeader {
		t.Errorf("b.json header %+v, %v", h, ok)
	}
	if got := string(out.Files[2].Data); got != "verbatim\n" {
		t.Errorf("c.md = %q", got)
	}
	if string(files[0].Data) != yamlBody {
		t.Error("Compile changed the substrate's own file data")
	}
	if !reflect.DeepEqual(out.Warnings, ir.Diagnostics{substrateWarning}) {
		t.Errorf("warnings %v", out.Warnings)
	}
	// The result installs as it is.
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, outDir, &out, WriteOptions{})
}

func TestCompileErrors(t *testing.T) {
	dir := t.TempDir()
	p := parseProfile(t, dir, "schema: autonomy.ir.v1\n")
	diags := ir.Diagnostics{{File: p.File, Severity: ir.Error, Message: "bad box"}}
	out, err := Compile(&fakeSubstrate{name: "fake", err: diags}, resolved.Of(p), dir)
	var got ir.Diagnostics
	if !errors.As(err, &got) || !reflect.DeepEqual(got, diags) {
		t.Errorf("the substrate's error came back as %#v", err)
	}
	if len(out.Files) != 0 {
		t.Errorf("an Output came with the error: %+v", out)
	}

	bad := &fakeSubstrate{name: "fake", out: Output{Files: []File{
		{Path: "../escape", Mode: 0o644},
		{Path: "x.json", Data: []byte("{}"), Mode: 0o644, Header: JSONHeader},
	}}}
	_, err = Compile(bad, resolved.Of(p), dir)
	if err == nil || !strings.Contains(err.Error(), `"../escape"`) || !strings.Contains(err.Error(), `"x.json"`) {
		t.Errorf("an invalid Output passed: %v", err)
	}
}

func TestSourcePath(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ file, dir, want string }{
		{filepath.Join(dir, "profiles", "x", "ir.yml"), dir, "profiles/x/ir.yml"},
		{filepath.Join(dir, "p", "ir.yml"), filepath.Join(dir, "out"), "p/ir.yml"},
		{filepath.Join(dir, "elsewhere", "copy", "p", "ir.yml"), filepath.Join(dir, "out"), "p/ir.yml"},
		{filepath.Join(dir, "ir.yml"), dir, "ir.yml"},
		{filepath.Join(dir, "ir.yml"), filepath.Join(dir, "out"), filepath.Base(dir) + "/ir.yml"},
		{filepath.Join(dir, "repo", ".autonomy", "profile", "ir.yml"), filepath.Join(dir, "repo"), ".autonomy/profile/ir.yml"},
	}
	for _, tt := range tests {
		if got := sourcePath(tt.file, tt.dir); got != tt.want {
			t.Errorf("sourcePath(%q, %q) = %q, want %q", tt.file, tt.dir, got, tt.want)
		}
	}
}

// TestDiagnoseReportsWhatCompileDoes: Diagnose gives Compile's warnings, sorted, with the support
// warnings, and Compile's errors (the profile's, an invalid Output), from one compile.
func TestDiagnoseReportsWhatCompileDoes(t *testing.T) {
	dir := t.TempDir()
	p := parseProfile(t, dir, usesProfile)
	late := ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: 9, Col: 1}, Severity: ir.Warning, Message: "late"}
	early := ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: 2, Col: 1}, Severity: ir.Warning, Message: "early"}
	s := &fakeSubstrate{name: "fake", out: Output{
		Files:    []File{{Path: "a.yml", Data: []byte(yamlBody), Mode: 0o644, Header: HashHeader}},
		Warnings: ir.Diagnostics{late, early},
	}}
	out, err := Compile(s, resolved.Of(p), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Diagnose(s, resolved.Of(p))
	if err != nil || len(got) < 3 || !reflect.DeepEqual(got, out.Warnings) {
		t.Errorf("Diagnose: %v, %v\nCompile's warnings: %v", got, err, out.Warnings)
	}
	if s.calls != 2 {
		t.Errorf("the substrate compiled %d times for two calls", s.calls)
	}
	bad := &fakeSubstrate{name: "fake", out: Output{Files: []File{{Path: "../escape", Mode: 0o644}}}}
	if _, err := Diagnose(bad, resolved.Of(p)); err == nil || !strings.Contains(err.Error(), `"../escape"`) {
		t.Errorf("an invalid Output passed: %v", err)
	}
	diags := ir.Diagnostics{{File: p.File, Severity: ir.Error, Message: "bad box"}}
	var back ir.Diagnostics
	if _, err := Diagnose(&fakeSubstrate{name: "fake", err: diags}, resolved.Of(p)); !errors.As(err, &back) || !reflect.DeepEqual(back, diags) {
		t.Errorf("the substrate's error came back as %#v", err)
	}
}

// listingSubstrate is a fakeSubstrate that is a Lister: CompileList answers list.
type listingSubstrate struct {
	fakeSubstrate
	list  Output
	lists int
}

func (l *listingSubstrate) CompileList(*resolved.Profile) (Output, error) {
	l.lists++
	return l.list, nil
}

// TestDiagnoseListsTheFilesOfALister: Diagnose takes a Lister's CompileList, files without Data
// (a JSONHeader file too), and never renders the files; Compile still does.
func TestDiagnoseListsTheFilesOfALister(t *testing.T) {
	dir := t.TempDir()
	p := parseProfile(t, dir, usesProfile)
	warn := ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: 2, Col: 1}, Severity: ir.Warning, Message: "listed"}
	s := &listingSubstrate{
		fakeSubstrate: fakeSubstrate{name: "fake", out: Output{Files: []File{{Path: "a.json", Data: []byte(jsonBody), Mode: 0o644, Header: JSONHeader}}}},
		list:          Output{Files: []File{{Path: "a.json", Mode: 0o644, Header: JSONHeader}}, Warnings: ir.Diagnostics{warn}},
	}
	got, err := Diagnose(s, resolved.Of(p))
	if err != nil || len(got) == 0 || got[0].Message != "listed" {
		t.Fatalf("Diagnose: %v, %v", got, err)
	}
	if s.calls != 0 || s.lists != 1 {
		t.Errorf("Diagnose compiled %d times and listed %d times", s.calls, s.lists)
	}
	if _, err := Compile(s, resolved.Of(p), dir); err != nil || s.calls != 1 {
		t.Errorf("Compile: %v, %d compiles", err, s.calls)
	}
	s.list.Files[0].Path = "../a.json"
	if _, err := Diagnose(s, resolved.Of(p)); err == nil || !strings.Contains(err.Error(), `"../a.json"`) {
		t.Errorf("an invalid list passed: %v", err)
	}
}
