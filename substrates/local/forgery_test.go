package local

import (
	"context"
	"errors"
	"strings"
	"testing"
)

var forgeryFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  boss:
    behavior: scripts/idle.sh
    capabilities: [agent:launch]
    triggers: [{ dispatch: true }]
  w:
    behavior: scripts/quick.sh
    triggers: [{ dispatch: true, params: { ROLE: subject.actorRole, WHO: subject.actor, ITEM: subject.ref } }]
`,
	files: map[string]string{
		"scripts/idle.sh":  "#!/bin/sh\nsleep 300\n" + scriptDone,
		"scripts/quick.sh": "#!/bin/sh\n" + scriptDone,
	},
}

// A session cannot set the params fit for gating (who fired it, their role): the attempt is
// refused and recorded; what it may set it still sets, and it gets itself and NONE.
func TestSessionCannotForgeGatingParams(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, forgeryFleet, false)
	op := newRunner(t, dir, Options{})
	boss := inSession(t, dir, op, "boss")
	ctx := context.Background()
	var denied *DeniedError
	for _, req := range []LaunchRequest{
		{Actor: "w", Params: map[string]string{"ROLE": "OWNER"}},
		{Actor: "w", Params: map[string]string{"WHO": "root"}},
		{Actor: "w", From: "root"},
	} {
		_, err := boss.Launch(ctx, req)
		if !errors.As(err, &denied) || !strings.Contains(err.Error(), "subject.actorRole is NONE") {
			t.Errorf("%+v: %v, want denied", req, err)
		}
	}
	evs, err := op.Store.Events(ctx, boss.caller.session.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == "denied" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d denials recorded, want 3: %+v", n, evs)
	}
	s := launch(t, boss, LaunchRequest{Actor: "w", Params: map[string]string{"ITEM": "7"}, From: "boss"})
	if s.Params["ROLE"] != "NONE" || s.Params["WHO"] != "boss" || s.Params["ITEM"] != "7" {
		t.Fatalf("params from a session: %#v", s.Params)
	}
	waitEnded(t, op, s.ID)
	// The operator's shell is the installation's owner: it sets them (documented).
	s = launch(t, op, LaunchRequest{Actor: "w", Params: map[string]string{"ROLE": "MEMBER", "WHO": "alice"}})
	if s.Params["ROLE"] != "MEMBER" || s.Params["WHO"] != "alice" {
		t.Fatalf("params from the operator: %#v", s.Params)
	}
	waitEnded(t, op, s.ID)
}
