package local

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// scriptFleet has the script behaviors of reference profiles: a TypeScript file with no #! line and
// no executable bit, and a shell script with neither.
var scriptFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
agents:
  ask:
    behavior: scripts/ask.ts
    triggers: [{ dispatch: true }]
  plain:
    behavior: scripts/plain.txt.sh
    triggers: [{ dispatch: true }]
`,
	files: map[string]string{
		"scripts/ask.ts":       "console.log('asked')\n",
		"scripts/plain.txt.sh": "echo plain > \"$AUTONOMY_DIR/plain-ran\"\n" + scriptDone,
	},
}

// interpreterDir makes a PATH directory of stand-in interpreters: each records its argv in
// $AUTONOMY_DIR/<name>-args; a node answers --version with version.
func interpreterDir(t *testing.T, nodeVersion string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$AUTONOMY_DIR/" + name + "-args\"\n" + scriptDone
		if name == "node" {
			script = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo " + nodeVersion + "; exit 0; fi\n" +
				"printf '%s\\n' \"$@\" > \"$AUTONOMY_DIR/node-args\"\n" + scriptDone
		}
		if name == "sh" {
			if err := os.Symlink("/bin/sh", filepath.Join(dir, "sh")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestScriptInterpreters: a script without a #! line runs by its extension — .ts with bun, else a
// node that strips types — and a missing interpreter refuses the launch with the install hint.
func TestScriptInterpreters(t *testing.T) {
	dir := installFleet(t, scriptFleet, false)
	script := filepath.Join(dir, ".autonomy/scripts/ask.ts")
	cases := []struct {
		name   string
		path   string
		record string // the stand-in that must have run, and the argv it got
		want   string
		refuse string
	}{
		{"bun", interpreterDir(t, "", "bun", "node"), "bun-args", script, ""},
		{"node 22.6", interpreterDir(t, "v22.6.0", "node"), "node-args", ir.NodeTypeStripping + "\n" + script, ""},
		{"node 20", interpreterDir(t, "v20.19.0", "node"), "", "", "node v20.19.0 is too old to run TypeScript: install Bun"},
		{"nothing", interpreterDir(t, ""), "", "", "no interpreter for a .ts script is installed (tried bun, node): install Bun"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PATH", c.path)
			for _, f := range []string{"bun-args", "node-args"} {
				os.Remove(filepath.Join(dir, f))
			}
			r := newRunner(t, dir, Options{})
			before, _ := r.Store.List(context.Background(), store.ListOptions{All: true})
			res, err := r.Launch(context.Background(), LaunchRequest{Actor: "ask"})
			if c.refuse != "" {
				var refused *RefusedError
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), c.refuse) || !strings.Contains(err.Error(), `actor "ask" cannot run its behavior .autonomy/scripts/ask.ts`) {
					t.Fatalf("launch: %v; want a refusal saying %q", err, c.refuse)
				}
				if ss, _ := r.Store.List(context.Background(), store.ListOptions{All: true}); len(ss) != len(before) {
					t.Fatalf("a refused launch recorded a session: %d, then %d", len(before), len(ss))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := waitEnded(t, r, res.Session.ID); s.Status != ir.Done {
				t.Fatalf("session %s: %s", s.Status, s.Reason)
			}
			if got := strings.TrimSpace(readFile(t, filepath.Join(dir, c.record))); got != c.want {
				t.Fatalf("%s got argv %q, want %q", c.record, got, c.want)
			}
		})
	}
	t.Run("sh", func(t *testing.T) {
		t.Setenv("PATH", interpreterDir(t, "", "sh"))
		r := newRunner(t, dir, Options{})
		s := launch(t, r, LaunchRequest{Actor: "plain"})
		if s = waitEnded(t, r, s.ID); s.Status != ir.Done {
			t.Fatalf("session %s: %s", s.Status, s.Reason)
		}
		if got := readFile(t, filepath.Join(dir, "plain-ran")); got != "plain\n" {
			t.Fatalf("plain-ran = %q", got)
		}
	})
}

// TestBoxOpaque: policy.box.local never refuses a key it does not read (a near miss of one it
// reads is warned about, positioned), and a null value leaves the default.
func TestBoxOpaque(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "skills/a"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "skills/a/SKILL.md"), []byte("# a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ir.yml"), []byte(`schema: autonomy.ir.v1
targets: [local]
agents:
  a: { behavior: a, triggers: [{ cron: "0 9 * * *" }] }
policy:
  box:
    local:
      timezon: Europe/Paris
      timezone: ~
      termfleet: { provider: managed }
`), 0o644)
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v\n%s", err, diags)
	}
	out, err := Substrate{}.Compile(resolve(p))
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if got := out.Warnings.String(); !strings.Contains(got, `ir.yml:8:7: warning: policy.box.local.timezon is carried verbatim and read by nothing (did you mean "timezone"?)`) || strings.Contains(got, "termfleet") {
		t.Errorf("warnings:\n%s", got)
	}
	for _, f := range out.Files {
		if f.Path == SchedulePath && !strings.Contains(string(f.Data), `"timezone": "UTC"`) {
			t.Errorf("timezone: ~ did not leave the default:\n%s", f.Data)
		}
	}
}

// TestReferenceReviewResult: a reviewer declaring the reference's contract is done only when its
// result satisfies open-autonomy.review.v1, conditional rules included.
func TestReferenceReviewResult(t *testing.T) {
	t.Parallel()
	sha := "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	dir := installFleet(t, fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
agents:
  review:
    behavior: scripts/review.sh
    capabilities: [code:review]
    result: { schema: open-autonomy.review.v1 }
    triggers: [{ dispatch: true }]
`,
		files: map[string]string{"scripts/review.sh": `#!/bin/sh
outcome=approved
[ "$AUTONOMY_REF" = 7 ] && outcome=changes-requested
printf '{"schema":"open-autonomy.review.v1","pr":%s,"headSha":"` + sha + `","verdict":"success","outcome":"%s","summary":"ok","findings":[],"humanApprovalRequired":false}' "$AUTONOMY_REF" "$outcome" > "$AUTONOMY_RESULT"
`},
	}, false)
	r := newRunner(t, dir, Options{})
	good := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "review", Ref: "42"}).ID)
	if good.Status != ir.Done || !strings.Contains(good.Verified, "open-autonomy.review.v1.json") {
		t.Errorf("a valid reference verdict: %s %q %q", good.Status, good.Reason, good.Verified)
	}
	bad := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "review", Ref: "7"}).ID)
	if bad.Status != ir.Failed || !strings.Contains(bad.Reason, "/outcome") {
		t.Errorf("a successful verdict that requests changes: %s %q", bad.Status, bad.Reason)
	}
}

// TestPolicyReachesAgents: an agent reads the policy block from the file AUTONOMY_POLICY names,
// from an isolated worktree too.
func TestPolicyReachesAgents(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
agents:
  w:
    behavior: scripts/read.sh
    execution: { workspace: isolated }
    triggers: [{ dispatch: true }]
policy:
  box:
    autonomy: { max_develop_attempts: 2 }
    org: { knob: [a, b] }
`,
		files: map[string]string{"scripts/read.sh": "#!/bin/sh\ncat \"$AUTONOMY_POLICY\" > \"$AUTONOMY_DIR/policy-seen\"\n" + scriptDone},
	}, true)
	r := newRunner(t, dir, Options{})
	if s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "w"}).ID); s.Status != ir.Done {
		t.Fatalf("session %s: %s", s.Status, s.Reason)
	}
	var policy struct {
		Box map[string]map[string]any `json:"box"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "policy-seen"))), &policy); err != nil {
		t.Fatal(err)
	}
	if policy.Box["autonomy"]["max_develop_attempts"] != 2.0 || policy.Box["org"]["knob"] == nil {
		t.Errorf("policy seen by the agent: %+v", policy)
	}
}
