//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/internal/playproto"
	"github.com/autonomyhq/autonomy/internal/store"
	"github.com/autonomyhq/autonomy/ir"
)

// bareRunner opens an in-process runner built without a PlaybookHost, as a layer that injects
// none does (newRunner injects playbook/runtimes.Host).
func bareRunner(t *testing.T, dir string) *Runner {
	t.Helper()
	r, err := New(dir, Options{Env: append(os.Environ(), LoginEnv+"=1")}) // its stand-in CLI reaches no model
	if err != nil {
		t.Fatal(err)
	}
	r.minute = 100 * time.Millisecond
	t.Cleanup(func() { r.Close() })
	return r
}

// weaveFleet is a skill actor whose agent writes the skill it received to received; with
// overlays, the profile has an overlay package that targets it.
func weaveFleet(received string, overlays bool) fleet {
	f := fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  judge:
    behavior: skills/reviewer
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat > ` + received + `; ` + deliverResult + `']
`,
		files: map[string]string{"skills/reviewer/SKILL.md": "---\nname: reviewer\ndescription: judges code\n---\n# Review\n"},
	}
	if overlays {
		f.files["playbooks/tone.md"] = "---\nschema: playbooks/v1\nslug: tone\ntitle: tone\ntargets: [{kind: skill, ref: reviewer}]\nkind: overlay\nstatus: active\n---\nBe kind.\n"
		f.files["playbooks/_index.md"] = ""
	}
	return f
}

// A runner built without a PlaybookHost runs a skill session of an installation without
// overlays as it is, and fails one whose installation weaves overlays, saying so, instead of
// panicking or running the skill unwoven.
func TestNoPlaybookHostWeave(t *testing.T) {
	for _, overlays := range []bool{false, true} {
		received := filepath.Join(t.TempDir(), "received.md")
		r := bareRunner(t, installFleet(t, weaveFleet(received, overlays), false))
		got := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "judge"}).ID)
		r.Wait()
		text, _ := os.ReadFile(received)
		switch {
		case !overlays && (got.Status != ir.Done || !strings.Contains(string(text), "# Review")):
			t.Errorf("without overlays: the session ended %s (%s), the agent received %q", got.Status, got.Reason, text)
		case overlays && (got.Status != ir.Failed || !strings.Contains(got.Reason, ErrNoPlaybookHost.Error()) || text != nil):
			t.Errorf("with overlays: the session ended %s (%s), the agent received %q; want it failed: %v", got.Status, got.Reason, text, ErrNoPlaybookHost)
		}
	}
}

// A runner built without a PlaybookHost refuses to answer a parked playbook run with
// ErrNoPlaybookHost, and changes nothing: the session stays parked and its token still answers
// it through a runner that hosts the playbook runtimes.
func TestNoPlaybookHostAnswer(t *testing.T) {
	dir := installFleet(t, resumeFleet, false)
	r := bareRunner(t, dir)
	ctx := context.Background()
	token := "rt_test"
	hash := playproto.HashToken(token)
	var s store.Session
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "flow", Kind: "agent", Status: ir.Paused, Origin: "operator", TokenHash: hash,
			Reason: inputRequired + "ship it?", StartedAt: time.Now(), CreatedAt: time.Now()}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Store.SavePause(ctx, hash, s.ID, []byte(`{"next": 0}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Approve(ctx, s.ID, token, true, ""); !errors.Is(err, ErrNoPlaybookHost) {
		t.Fatalf("approve: %v, want %v", err, ErrNoPlaybookHost)
	}
	if _, err := r.Respond(ctx, s.ID, token, playproto.Answer{Text: "yes"}, ""); !errors.Is(err, ErrNoPlaybookHost) {
		t.Fatalf("respond: %v, want %v", err, ErrNoPlaybookHost)
	}
	if got, _, _ := r.Store.Get(ctx, s.ID); !parked(got) || got.TokenHash != hash {
		t.Fatalf("after the refusals the session is %s (token hash %q)", got.Status, got.TokenHash)
	}
	hosted := newRunner(t, dir, Options{})
	n, err := hosted.Approve(ctx, s.ID, token, false, "")
	if err != nil || n.Status != ir.Cancelled || !strings.HasPrefix(n.Reason, "denied at step ") {
		t.Fatalf("deny through a runner hosting the playbooks: %s (%s), %v", n.Status, n.Reason, err)
	}
}

// A runner built without a PlaybookHost does not continue a step playbook session whose
// supervisor died: its reconciliation says why, and leaves the session for one that does.
func TestNoPlaybookHostContinue(t *testing.T) {
	dir := installFleet(t, resumeFleet, false)
	r := bareRunner(t, dir)
	ctx := context.Background()
	dead := deadProcess(t)
	var s store.Session
	err := r.Store.Tx(ctx, func(tx *store.Tx) error {
		s = store.Session{Actor: "writer", Kind: "agent", Status: ir.Running, Origin: "operator", PID: dead.pid, PIDStart: dead.start,
			SupervisorPID: dead.pid, SupervisorStart: dead.start, StartedAt: time.Now(), CreatedAt: time.Now().Add(-time.Hour)}
		return tx.Insert(&s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Get(ctx, s.ID); !errors.Is(err, ErrNoPlaybookHost) {
		t.Fatalf("get: %v, want %v", err, ErrNoPlaybookHost)
	}
	got, _, _ := r.Store.Get(ctx, s.ID)
	var n int
	err = r.Store.Tx(ctx, func(tx *store.Tx) (err error) { n, err = tx.CountEvents(s.ID, resumedEvent); return err })
	if err != nil || got.Status != ir.Running || got.SupervisorPID != dead.pid || n != 0 {
		t.Fatalf("after the refusal: %s, supervisor %d, %d resumed events (%v)", got.Status, got.SupervisorPID, n, err)
	}
}
