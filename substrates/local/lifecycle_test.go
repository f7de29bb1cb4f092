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
	"github.com/autonomyhq/autonomy/playbook"
	"github.com/autonomyhq/autonomy/substrates"
)

// lifecycleFleet: old is superseded by new (its successor, which says "SUCCESSOR TEXT"); gone
// is archived. The successor is in the overlay folder, where the profile's library holds it.
// Each actor's agent prints the instructions it was handed.
func lifecycleFleet(t *testing.T) fleet {
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat\n"+deliverResult+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	superseded := strings.NewReplacer("status: active", "status: superseded\nsuperseded_by: ../playbooks/new.playbook.md", "Handle the item,", "OLD TEXT: handle the item,").Replace(capsule("old-asked", "self-attestation"))
	successor := strings.NewReplacer("status: active", "status: active\nsupersedes: ../pb/old.playbook.md", "Handle the item,", "SUCCESSOR TEXT: handle the item,").Replace(capsule("new-asked", "self-attestation"))
	archived := strings.Replace(capsule("gone-asked", "self-attestation"), "status: active", "status: archived", 1)
	return fleet{
		yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  old:
    behavior: pb/old.playbook.md
    triggers: [{ dispatch: true }]
  gone:
    behavior: pb/gone.playbook.md
    triggers: [{ dispatch: true }, { cron: "*/5 * * * *" }]
policy:
  box:
    local:
      agent: [` + agent + `]
`,
		files: map[string]string{"pb/old.playbook.md": superseded, "playbooks/new.playbook.md": successor, "pb/gone.playbook.md": archived},
	}
}

// Seed 000: a superseded playbook's new runs follow its successor, and the session's log says
// so; an archived playbook starts no new run (Launch refuses, saying why; its cron trigger is
// not scheduled).
func TestCapsuleLifecycle(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, lifecycleFleet(t), false)
	r := newRunner(t, dir, Options{})
	ctx := context.Background()

	s := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "old"}).ID)
	log := readFile(t, s.LogPath)
	if s.Status != ir.Done || !strings.Contains(log, "SUCCESSOR TEXT") || strings.Contains(log, "OLD TEXT") {
		t.Fatalf("the superseded behavior's session is %s (%s), handed:\n%s", s.Status, s.Reason, log)
	}
	if !strings.Contains(log, "autonomy: the behavior is superseded (status: superseded at ") || !strings.Contains(log, "this run follows its successor playbooks/new.playbook.md (pb/old.playbook.md → playbooks/new.playbook.md)") {
		t.Fatalf("the session's log does not say it follows the successor:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(dir, ".autonomy/playbooks/new.playbook.md")); err != nil {
		t.Fatalf("the successor is not installed: %v", err)
	}

	_, err := r.Launch(ctx, LaunchRequest{Actor: "gone"})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "its behavior pb/gone.playbook.md is archived (status: archived at ") || !strings.Contains(err.Error(), "gone.playbook.md:5:9") {
		t.Fatalf("launching an archived behavior: %v", err)
	}
	if list, _ := r.Store.List(ctx, store.ListOptions{All: true}); len(list) != 1 {
		t.Fatalf("the refused launch recorded a session: %d sessions", len(list))
	}
	var sched Schedule
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, SchedulePath))), &sched); err != nil {
		t.Fatal(err)
	}
	if len(sched.Entries) != 0 {
		t.Fatalf("the archived actor's cron trigger is scheduled: %+v", sched.Entries)
	}
}

// TestCapsuleLifecycleWarns: compile says an archived behavior's actor starts no run.
func TestCapsuleLifecycleWarns(t *testing.T) {
	f := lifecycleFleet(t)
	dir := filepath.Join(t.TempDir(), "p")
	for name, content := range map[string]string{"ir.yml": f.yml, "pb/old.playbook.md": f.files["pb/old.playbook.md"], "playbooks/new.playbook.md": f.files["playbooks/new.playbook.md"], "pb/gone.playbook.md": f.files["pb/gone.playbook.md"]} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	p, diags, err := ir.Check(dir)
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	r, pd := playbook.Resolve(p)
	if pd.HasErrors() {
		t.Fatalf("the playbooks: %s", pd)
	}
	out, err := substrates.Compile(Substrate{}, r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Warnings.String(), `actor "gone": its behavior pb/gone.playbook.md is archived`) {
		t.Fatalf("warnings:\n%s", out.Warnings)
	}
}
