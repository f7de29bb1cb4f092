package ghactions

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions/control"
)

// TestSharedTextIsRenderedText compiles every bundled and test profile, and a synthetic fleet
// of every kind of actor, twice: reusing the text of the steps, envs and step lists the
// workflows share (emitter.share) and of each shape's triggers and params in the manifest
// (compiler.shapeJSON), and rendering every part anew. The outputs are the same bytes.
func TestSharedTextIsRenderedText(t *testing.T) {
	dirs := append(lintProfiles(t), fleet(t, 100))
	for _, dir := range dirs {
		p, diags, err := ir.Check(dir)
		if err != nil || diags.HasErrors() {
			continue // the ir's refusals, tested there
		}
		reused, errReused := substrates.Compile(Substrate{}, resolve(p), t.TempDir())
		fresh, errFresh := substrates.Compile(Substrate{fresh: true}, resolve(p), t.TempDir())
		if fmt.Sprint(errReused) != fmt.Sprint(errFresh) {
			t.Fatalf("%s: reusing shared text, the compile says %v; rendering anew, %v", dir, errReused, errFresh)
		}
		if len(reused.Files) != len(fresh.Files) {
			t.Fatalf("%s: %d files reusing shared text, %d rendering anew", dir, len(reused.Files), len(fresh.Files))
		}
		for i, f := range reused.Files {
			g := fresh.Files[i]
			if f.Path != g.Path || f.Mode != g.Mode || !bytes.Equal(f.Data, g.Data) {
				t.Fatalf("%s: %s differs reusing shared text:\n%s", dir, f.Path, substrates.UnifiedDiff(f.Path, g.Data, f.Data))
			}
		}
	}
}

// TestResumeInputsStayWithTheActorThatElicits: two actors with the same triggers share their
// workflows' on: (compiler.on); the one whose step playbook asks a person adds the resume inputs
// to its own copy, and the other's workflow_dispatch keeps only its params and the correlation
// input.
func TestResumeInputsStayWithTheActorThatElicits(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "../../profiles/steps-triage", dir)
	irPath := filepath.Join(dir, "ir.yml")
	src, err := os.ReadFile(irPath)
	if err != nil {
		t.Fatal(err)
	}
	twin := `  twin:
    behavior: skills/twin
    capabilities: [tasks:converse]
    triggers:
      - event: issues
        config: { types: [opened] }
        params: { ITEM: subject.ref, REPORT: subject.text }
      - dispatch: true
        params: { ITEM: subject.ref, REPORT: subject.text }
    timeout: 30
`
	text := strings.Replace(string(src), "\npolicy:", twin+"\npolicy:", 1)
	write(t, irPath, text, 0o644)
	write(t, filepath.Join(dir, "skills", "twin", "SKILL.md"), "# twin\n\nTriage the report.\n", 0o644)
	_, out := compileDir(t, dir)
	inputs := func(actor string) []string {
		var wf struct {
			On struct {
				WorkflowDispatch struct {
					Inputs yaml.Node `yaml:"inputs"`
				} `yaml:"workflow_dispatch"`
			} `yaml:"on"`
		}
		if err := yaml.Unmarshal(outputFile(out, WorkflowPath(actor)), &wf); err != nil {
			t.Fatal(err)
		}
		var names []string
		for i := 0; i+1 < len(wf.On.WorkflowDispatch.Inputs.Content); i += 2 {
			names = append(names, wf.On.WorkflowDispatch.Inputs.Content[i].Value)
		}
		return names
	}
	if got, want := inputs("twin"), []string{"ITEM", "REPORT", correlationInput}; !slices.Equal(got, want) {
		t.Errorf("twin's workflow_dispatch inputs are %v, want %v", got, want)
	}
	if got := inputs("triage"); !slices.Contains(got, control.ResumeRunInput) || !slices.Contains(got, correlationInput) {
		t.Errorf("triage's workflow_dispatch inputs are %v, want its params, the correlation input and the resume inputs", got)
	}
}

// TestTriggersKeyTellsTriggersApart: lists of triggers that differ in anything the shape reads
// (a kind, a cron, an event, a config, a param) have different keys, even where the text of one
// would read as the framing of another.
func TestTriggersKeyTellsTriggersApart(t *testing.T) {
	str := func(s string) ir.String { return ir.String{Value: s} }
	node := func(src string) *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		return n.Content[0]
	}
	params := func(kv ...string) []ir.Param {
		var ps []ir.Param
		for i := 0; i+1 < len(kv); i += 2 {
			ps = append(ps, ir.Param{Name: str(kv[i]), Source: str(kv[i+1])})
		}
		return ps
	}
	lists := [][]*ir.Trigger{
		{{Kind: ir.Cron, Cron: str("0 * * * *")}},
		{{Kind: ir.Cron, Cron: str("0 * * * 1")}},
		{{Kind: ir.Cron, Cron: str("0 * * * *")}, {Kind: ir.Dispatch, Dispatch: str("true")}},
		{{Kind: ir.Dispatch, Dispatch: str("true"), Params: params("A", "subject.ref")}},
		{{Kind: ir.Dispatch, Dispatch: str("true"), Params: params("A", "subject.text")}},
		{{Kind: ir.Dispatch, Dispatch: str("true"), Params: params("A1:B", "subject.ref")}},
		{{Kind: ir.Dispatch, Dispatch: str("true"), Params: params("A", "1:Bsubject.ref")}},
		{{Kind: ir.Event, Event: str("issues")}},
		{{Kind: ir.Event, Event: str("issues"), Config: node("{types: [opened]}")}},
		{{Kind: ir.Event, Event: str("issues"), Config: node("{types: [closed]}")}},
		{{Kind: ir.Event, Event: str("issues"), Config: node("{types: opened}")}},
		{{Kind: ir.Event, Event: str("issues"), Config: node("{types: [\"true\"]}")}},
		{{Kind: ir.Event, Event: str("issues"), Config: node("{types: [true]}")}},
		{{Kind: ir.Event, Event: str("issues;")}},
		{{Kind: ir.Event, Event: str("issues")}, {Kind: ir.Event, Event: str("")}},
	}
	seen := map[string]int{}
	for i, l := range lists {
		k := triggersKey(l)
		if j, dup := seen[k]; dup {
			t.Errorf("triggers %d and %d have the same key %q", j, i, k)
		}
		seen[k] = i
	}
}

// TestWordsArePlainSafe: every string word lets the emitter write plain without asking
// plainSafe is one plainSafe accepts, over every word of up to three characters from letters
// (yaml.v3's hinted ones among them), a digit, '-' and '_', and the longer spellings of YAML 1.1
// booleans and nulls.
func TestWordsArePlainSafe(t *testing.T) {
	const alphabet = "aeynotfNYTFO0-_~."
	words := []string{"falsey", "nulls", "Yes_please", "offset", "onion", "timeout-minutes", "FALSE1"}
	var grow func(prefix string)
	grow = func(prefix string) {
		if len(prefix) == 3 {
			return
		}
		for _, c := range alphabet {
			w := prefix + string(c)
			words = append(words, w)
			grow(w)
		}
	}
	grow("")
	accepted := 0
	for _, w := range words {
		if word(w) {
			accepted++
			if !plainSafe(w) {
				t.Errorf("word(%q) but not plainSafe", w)
			}
		}
	}
	if accepted < 100 {
		t.Fatalf("word accepted only %d of %d strings", accepted, len(words))
	}
}

// TestDocumentsKeepTheirBytes renders documents of many sizes into the emitter's slabs, one
// larger than a slab among them: each keeps its own bytes (its header room, then what a fresh
// emitter renders), however many were rendered after it, and ends where its capacity does.
func TestDocumentsKeepTheirBytes(t *testing.T) {
	var e emitter
	var wfs []mapping
	var docs [][]byte
	for i := range 400 {
		script := strings.Repeat(fmt.Sprintf("echo %d\n", i), 1+i*i%3000)
		if i == 150 {
			script = strings.Repeat("echo big\n", slabSize/8)
		}
		wf := mapping{{key: "name", value: fmt.Sprintf("wf-%d", i)}, {key: "run", value: literal(script)}}
		wfs = append(wfs, wf)
		docs = append(docs, e.document(wf))
	}
	for i, doc := range docs {
		var fresh emitter
		fresh.mappingBody(wfs[i], 0)
		want := append(make([]byte, substrates.HeaderRoom), fresh.b.Bytes()...)
		if !bytes.Equal(doc, want) {
			t.Fatalf("document %d (%d bytes) does not hold its own bytes", i, len(want))
		}
		if cap(doc) != len(doc) {
			t.Errorf("document %d: capacity %d beyond its %d bytes: a later write could reach it", i, cap(doc), len(doc))
		}
	}
}

// TestPermissionsBlocksAreTheirOwn: compiler.permissions gives each distinct block its own
// entries, the same block the same shared mapping, and a scope it does not know its own block.
func TestPermissionsBlocksAreTheirOwn(t *testing.T) {
	var c compiler
	render := func(m mapping) string {
		var e emitter
		e.mappingBody(m, 0)
		return e.b.String()
	}
	read := c.permissions(Permissions{"contents": Read, "issues": Read})
	write := c.permissions(Permissions{"contents": Read, "issues": Write})
	if got, want := render(read), "contents: read\nissues: read\n"; got != want {
		t.Errorf("read block %q, want %q", got, want)
	}
	if got, want := render(write), "contents: read\nissues: write\n"; got != want {
		t.Errorf("write block %q, want %q", got, want)
	}
	if again := c.permissions(Permissions{"issues": Read, "contents": Read}); &again[0] != &read[0] {
		t.Error("the same block was built twice")
	}
	if got, want := render(c.permissions(Permissions{"contents": Read, "x-new-scope": Write})), "contents: read\nx-new-scope: write\n"; got != want {
		t.Errorf("block with an unknown scope %q, want %q", got, want)
	}
}

// TestCommandConditionNamesItsActor: actors of one shape share their job's condition, except
// the ones a comment fires: their condition is the command addressed to each by name.
func TestCommandConditionNamesItsActor(t *testing.T) {
	_, out := compileDir(t, fleet(t, 20))
	for _, name := range []string{"worker-5", "worker-6", "worker-15", "worker-18"} {
		var wf struct {
			Jobs struct {
				Agent struct {
					If string `yaml:"if"`
				} `yaml:"agent"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(outputFile(out, WorkflowPath(name)), &wf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(wf.Jobs.Agent.If, "'/agent "+name+" '") {
			t.Errorf("%s's agent job runs under %q, which does not name it", name, wf.Jobs.Agent.If)
		}
	}
}

// TestScriptReviewerKeepsItsVerdictWhateverComesFirst: a script reviewer with its own result
// contract and a plain script with none have the same interpreter, but only the reviewer's run
// step hands its verdict on (AUTONOMY_RESULT): whichever of the two compiles first, each keeps
// its own run step.
func TestScriptReviewerKeepsItsVerdictWhateverComesFirst(t *testing.T) {
	quiet := `  quiet:
    behavior: scripts/a.sh
    result: { schema: none }
    triggers: [{ dispatch: true, params: { REF: subject.ref } }]
`
	rest := `  proposer:
    behavior: scripts/a.sh
    capabilities: [code:propose]
    review: reviewer
    triggers: [{ dispatch: true, params: { REF: subject.ref } }]
  reviewer:
    behavior: scripts/a.sh
    capabilities: [code:review]
    result: { schema: autonomy.review.v1 }
    triggers: [{ dispatch: true, params: { REF: subject.ref } }]
`
	for name, actors := range map[string]string{"quiet first": quiet + rest, "quiet last": rest + quiet} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scripts", "a.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		profile := "schema: autonomy.ir.v1\ntargets: [gh-actions]\nactors:\n" + actors
		if err := os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(profile), 0o644); err != nil {
			t.Fatal(err)
		}
		_, out := compileDir(t, dir)
		for actor, wantVerdict := range map[string]bool{"reviewer": true, "quiet": false} {
			run := runStepScript(t, outputFile(out, WorkflowPath(actor)), actor)
			if got := strings.Contains(run, "AUTONOMY_RESULT"); got != wantVerdict {
				t.Errorf("%s: %s's run step sets AUTONOMY_RESULT: %v, want %v\n%s", name, actor, got, wantVerdict, run)
			}
		}
	}
}

// runStepScript is the run: of the step "Run <actor>" of the agent job of workflow wf.
func runStepScript(t *testing.T, wf []byte, actor string) string {
	t.Helper()
	var doc struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(wf, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Jobs["agent"].Steps {
		if s.Name == "Run "+actor {
			return s.Run
		}
	}
	t.Fatalf("no step %q in the agent job", "Run "+actor)
	return ""
}
