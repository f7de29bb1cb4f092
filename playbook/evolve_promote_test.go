package playbook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/playbook/overlay"
)

const shadow = "prefer-page-supersession-over-deletion"

const evaluation = `    evolve:
      evaluation: { metric: score, field: score, minSessions: 3, minImprovement: 0.1 }
`

// session is one recorded session for a store: whether it was woven with the shadow overlay,
// its end, and its result (nil: none).
type session struct {
	woven  bool
	status ir.SessionStatus
	result map[string]any
}

// sessions records sessions of the librarian in a real store, as the local runner does: a
// "woven" event each (in the runner's words), a result file for each that has one.
func sessions(t *testing.T, ss []session) playbook.Sessions {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	results := filepath.Join(dir, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		row := store.Session{Actor: "librarian", Kind: "agent", Status: s.status}
		woven := "1 overlay woven: flag-contradictions-explicitly (overlay, priority 70); matched as skill/librarian (its folder's name)"
		if s.woven {
			woven = "2 overlays woven: flag-contradictions-explicitly (overlay, priority 70), " + shadow + " (overlay, priority 50); matched as skill/librarian (its folder's name)"
		}
		err := st.Tx(context.Background(), func(tx *store.Tx) error {
			if err := tx.Insert(&row); err != nil {
				return err
			}
			return tx.Log(store.Event{Session: row.ID, Actor: row.Actor, Kind: "woven", Message: woven})
		})
		if err != nil {
			t.Fatal(err)
		}
		if s.result != nil {
			data, _ := json.Marshal(s.result)
			if err := os.WriteFile(filepath.Join(results, row.ID+".json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return playbook.Sessions{Store: st, Path: db, Results: results}
}

func scored(woven bool, scores ...float64) []session {
	var out []session
	for _, s := range scores {
		out = append(out, session{woven: woven, status: ir.Done, result: map[string]any{"score": s, "summary": "ok"}})
	}
	return out
}

func measureWith(e *playbook.Evolver, srcs ...playbook.Sessions) func(*overlay.Overlay, []string) (*playbook.Measurement, error) {
	return func(o *overlay.Overlay, actors []string) (*playbook.Measurement, error) {
		return playbook.Measure(context.Background(), e.Config.Evaluation, srcs, o, actors)
	}
}

func statusOf(t *testing.T, dir, slug string) string {
	t.Helper()
	for _, o := range checkPackage(t, dir).Overlays {
		if o.Slug.Value == slug {
			return o.Status.Value
		}
	}
	t.Fatalf("no overlay %s", slug)
	return ""
}

func TestPromoteOnAMeasuredImprovement(t *testing.T) {
	dir := librarian(t, evaluation)
	// The shadow overlay supersedes the active inline-citations: promoting it archives that one.
	file := filepath.Join(dir, "playbooks", "role", "librarian", "prefer-supersession.md")
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), "status: shadow", "status: shadow\nsupersedes: [inline-citations]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg, _, err := playbook.LoadPackage(filepath.Join(dir, "playbooks"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := overlay.WriteIndex(pkg); err != nil {
		t.Fatal(err)
	}
	e, out := evolver(t, dir)
	// A trial installation holds the sessions woven with it, production those without; a failed
	// session scores 0, a cancelled one is left out.
	trial := sessions(t, append(scored(true, 0.9, 0.8, 0.85), session{woven: true, status: ir.Cancelled}))
	prod := sessions(t, append(scored(false, 0.6, 0.7), session{status: ir.Failed}, session{status: ir.Done, result: map[string]any{"score": 0.65}}))
	if err := e.Promote(context.Background(), shadow, measureWith(e, trial, prod)); err != nil {
		t.Fatalf("Promote: %v\n%s", err, out)
	}
	for _, want := range []string{
		`evaluation: score: the mean of the sessions' result field "score" (policy.box.evolve.evaluation)`,
		"sessions: the ended sessions of librarian recorded in " + trial.Path + ", " + prod.Path,
		"candidate (woven with " + shadow + "): 3 sessions, mean 0.85",
		"baseline (woven without it): 4 sessions, mean 0.4875",
		"threshold: at least 3 sessions per arm, and an improvement of at least 0.1 and above 0",
		"improvement: +0.3625",
		"verdict: improved",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if s := statusOf(t, dir, shadow); s != "active" {
		t.Fatalf("status %s", s)
	}
	if s := statusOf(t, dir, "inline-citations"); s != "archived" {
		t.Fatalf("superseded status %s", s)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "playbooks", overlay.LogFile))
	for _, want := range []string{
		"- 2026-07-01T12:00:00Z promote " + shadow + " (playbooks/role/librarian/prefer-supersession.md): shadow → active; score of score: candidate 0.85 over 3 sessions, baseline 0.4875 over 4, improvement +0.3625 (threshold 0.1)\n",
		"- 2026-07-01T12:00:00Z archive inline-citations (playbooks/skill/inline-citations.md): superseded by " + shadow + "\n",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("_log.md lacks %q:\n%s", want, log)
		}
	}
	// Woven now; the superseded one is not.
	pkg = checkPackage(t, dir)
	res := overlay.Weave(pkg.Overlays, overlay.Session{Actor: overlay.Actor{Name: "librarian", Behavior: "librarian"}, Skill: "# L\n", Now: t0})
	var woven []string
	for _, w := range res.Woven {
		woven = append(woven, w.Slug)
	}
	if fmt.Sprint(woven) != "[flag-contradictions-explicitly "+shadow+"]" {
		t.Fatalf("woven %v", woven)
	}
}

func TestPromoteRefusals(t *testing.T) {
	better := func(t *testing.T) []playbook.Sessions {
		return []playbook.Sessions{sessions(t, append(scored(true, 0.9, 0.9, 0.9), scored(false, 0.5, 0.5, 0.5)...))}
	}
	cases := []struct {
		name, box string
		srcs      func(t *testing.T) []playbook.Sessions
		edit      func(t *testing.T, dir string)
		slug      string
		judge     func(context.Context, string) (string, error)
		want      string
	}{
		{name: "no evaluation declared", srcs: better, slug: shadow,
			want: "declares no evaluation, so no improvement can be measured; declare one under policy.box.evolve.evaluation"},
		{name: "no improvement", box: evaluation, slug: shadow, srcs: func(t *testing.T) []playbook.Sessions {
			return []playbook.Sessions{sessions(t, append(scored(true, 0.5, 0.6, 0.55), scored(false, 0.6, 0.6, 0.6)...))}
		}, want: "not promoted: the improvement -0.05 is not above 0 and at least minImprovement 0.1"},
		{name: "an improvement under the threshold", box: evaluation, slug: shadow, srcs: func(t *testing.T) []playbook.Sessions {
			return []playbook.Sessions{sessions(t, append(scored(true, 0.65, 0.65, 0.65), scored(false, 0.6, 0.6, 0.6)...))}
		}, want: "not promoted: the improvement +0.05 is not above 0 and at least minImprovement 0.1"},
		{name: "too few candidate sessions", box: evaluation, slug: shadow, srcs: func(t *testing.T) []playbook.Sessions {
			return []playbook.Sessions{sessions(t, append(scored(true, 1, 1), scored(false, 0, 0, 0)...))}
		}, want: "not promoted: 2 candidate sessions (woven with " + shadow + "), fewer than minSessions 3"},
		{name: "not shadow", box: evaluation, slug: "inline-citations", srcs: better,
			want: `playbooks/skill/inline-citations.md:14:9: overlay "inline-citations" is active: only a shadow overlay is promoted`},
		{name: "no such overlay", box: evaluation, slug: "nope", srcs: better, want: `playbooks has no overlay "nope"`},
		{name: "the persona lock changed since it was reflected", box: evaluation, slug: shadow, srcs: better,
			edit: func(t *testing.T, dir string) {
				ir := filepath.Join(dir, "ir.yml")
				data, _ := os.ReadFile(ir)
				data = []byte(strings.Replace(string(data), `phrases: ["always tell the truth"]`, `phrases: ["always tell the truth", "the old one"]`, 1))
				file := filepath.Join(dir, "playbooks", "role", "librarian", "prefer-supersession.md")
				o, _ := os.ReadFile(file)
				o = append(o, []byte("\nNever call the old one wrong.\n")...)
				if os.WriteFile(ir, data, 0o644) != nil || os.WriteFile(file, o, 0o644) != nil {
					t.Fatal("write")
				}
			}, want: `prefer-supersession.md:20:1: the overlay touches a locked persona trait: negates-locked-phrase: trait "honesty"`},
		{name: "the judge fails it", box: evaluation + "      judge: { enabled: true }\n", slug: shadow, srcs: better,
			judge: func(context.Context, string) (string, error) { return "FAIL: warmth: it asks for a colder tone\n", nil },
			want:  "not promoted: the judge (codex) says the overlay touches the persona lock: FAIL: warmth: it asks for a colder tone"},
		{name: "the judge gives no verdict", box: evaluation + "      judge: { enabled: true }\n", slug: shadow, srcs: better,
			judge: func(context.Context, string) (string, error) { return "I think it is fine.", nil },
			want:  `not promoted: the judge (codex) gave no verdict (its answer must start with PASS or FAIL; it began "I think it is fine.")`},
		{name: "the judge fails to run", box: evaluation + "      judge: { enabled: true }\n", slug: shadow, srcs: better,
			judge: func(context.Context, string) (string, error) { return "", errors.New("exit status 1") },
			want:  "not promoted: the judge (codex) failed: exit status 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := librarian(t, c.box)
			if c.edit != nil {
				c.edit(t, dir)
			}
			before := snapshot(t, dir)
			e, out := evolver(t, dir)
			e.Judge = c.judge
			err := e.Promote(context.Background(), c.slug, measureWith(e, c.srcs(t)...))
			var r *playbook.Refusal
			if !errors.As(err, &r) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v; want a refusal with %q\n%s", err, c.want, out)
			}
			sameTree(t, before, snapshot(t, dir))
		})
	}
}

func TestPromoteWithTheJudgesPass(t *testing.T) {
	dir := librarian(t, evaluation+"      judge: { enabled: true }\n")
	e, out := evolver(t, dir)
	var asked string
	e.Judge = func(_ context.Context, prompt string) (string, error) { asked = prompt; return "PASS", nil }
	srcs := sessions(t, append(scored(true, 0.9, 0.9, 0.9), scored(false, 0.5, 0.5, 0.5)...))
	if err := e.Promote(context.Background(), shadow, measureWith(e, srcs)); err != nil {
		t.Fatalf("Promote: %v\n%s", err, out)
	}
	for _, want := range []string{"- warmth\n", "- honesty: always tell the truth\n", "When a page is outdated, link the page that supersedes it.", "Answer with one line: PASS"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the judge's prompt lacks %q:\n%s", want, asked)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "playbooks", overlay.LogFile))
	if !strings.Contains(string(log), "; judge codex: PASS\n") {
		t.Fatalf("_log.md: %s", log)
	}
}

func TestRateMetric(t *testing.T) {
	dir := librarian(t, `    evolve:
      evaluation: { metric: rate, field: verdict, equals: approve, minSessions: 2 }
`)
	e, out := evolver(t, dir)
	v := func(woven bool, verdict string) session {
		return session{woven: woven, status: ir.Done, result: map[string]any{"verdict": verdict}}
	}
	srcs := sessions(t, []session{v(true, "approve"), v(true, "approve"), v(false, "approve"), v(false, "request-changes")})
	if err := e.Promote(context.Background(), shadow, measureWith(e, srcs)); err != nil {
		t.Fatalf("Promote: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), `rate: the share of sessions whose result's "verdict" is "approve"`) || !strings.Contains(out.String(), "improvement: +0.5") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestReadEvolveErrors(t *testing.T) {
	cases := map[string]string{
		"    evolve: [1]\n": "ir.yml:36:13: policy.box.evolve must be a mapping",
		"    evolve:\n      evaluation: { metric: mean, field: score }\n":              "ir.yml:37:29: policy.box.evolve.evaluation.metric \"mean\" is unknown",
		"    evolve:\n      evaluation: { metric: rate, field: verdict }\n":            "ir.yml:37:19: policy.box.evolve.evaluation: metric rate needs equals",
		"    evolve:\n      evaluation: { metric: score }\n":                           "ir.yml:37:19: policy.box.evolve.evaluation has no field",
		"    evolve:\n      evaluation: { metric: score, field: s, minSessions: 0 }\n": "policy.box.evolve.evaluation.minSessions must be a positive integer",
		"    evolve:\n      judge: { enabled: yes please }\n":                          "policy.box.evolve.judge.enabled must be true or false",
		"    evolve:\n      judge: { agent: gpt }\n":                                   "policy.box.evolve.judge.agent \"gpt\" is no agent preset",
		"    evolve:\n      juge: {}\n":                                                "policy.box.evolve: unknown key \"juge\"",
	}
	for box, want := range cases {
		dir := librarian(t, box)
		p, diags, err := ir.Check(dir)
		if err != nil || diags.HasErrors() {
			t.Fatalf("profile: %v %v", err, diags)
		}
		_, err = playbook.NewEvolver(p, t0, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v; want %q", box, err, want)
		}
		if _, pd := playbook.Profile(p); !strings.Contains(pd.String(), want) {
			t.Errorf("%q: validate does not report it:\n%s", box, pd)
		}
	}
}
