//go:build unix

package effect_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli/agentclitest"
	"github.com/autonomyhq/autonomy/internal/modelfake"
	"github.com/autonomyhq/autonomy/substrates/ghactions/effect"
)

// TestReferenceFleetRuns runs a profile in the shape of the reference's self-driving
// (substrates/testdata/self-driving) through its generated workflows against ghfake, each job
// with the command and env the parsed workflow declares: the PM on its schedule launches
// develop, which has only an event trigger of its own; develop (the real pinned codex against
// the scripted model) proposes; the propose job dispatches the reviewer, which approves; the
// pull request carries agent-review: success on its head and is mergeable. (The local half is
// substrates/local's TestReferenceFleetRuns.)
func TestReferenceFleetRuns(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("../../testdata/self-driving")
	if err != nil {
		t.Fatal(err)
	}
	f := newFleetWith(t, dir, nil, agentclitest.Require(t, "codex"))
	fake, r, item, values, wf, dispatched := f.fake, f.r, f.item, f.values, f.wf, f.dispatched

	pm := modelfake.Start(
		modelfake.Turn{Shell: "gh workflow run develop.yml -f ISSUE=" + strconv.Itoa(item)},
		finalResult("Launched develop."),
	)
	defer pm.Close()
	pv := values(pm, "schedule", nil)
	out, ran := r.job(wf("pm"), "agent", pv, false)
	if !ran || pm.Err() != nil {
		t.Fatalf("pm: ran %v, model %v\n%s", ran, pm.Err(), out)
	}
	t.Logf("pm:\n%s", out)
	if out, ran = r.job(wf("pm"), "apply", pv, false); !ran {
		t.Fatalf("pm's apply job was skipped\n%s", out)
	}
	t.Logf("apply:\n%s", out)
	dev := dispatched("develop.yml")
	if dev.Inputs["ISSUE"] != strconv.Itoa(item) {
		t.Fatalf("develop dispatched with %+v", dev)
	}

	devModel := modelfake.Start(
		modelfake.Turn{Shell: "echo hello > greeting.txt && git add greeting.txt && git commit -q -m 'Greet the user'"},
		finalResult("Committed the greeting."),
	)
	defer devModel.Close()
	dv := values(devModel, "workflow_dispatch", dev.Inputs)
	if out, ran := r.job(wf("develop"), "agent", dv, false); !ran || devModel.Err() != nil {
		t.Fatalf("develop: ran %v, model %v\n%s", ran, devModel.Err(), out)
	}
	if out, ran := r.job(wf("develop"), "propose", dv, false); !ran {
		t.Fatalf("the propose job was skipped\n%s", out)
	}
	f.gateDispatched()
	pulls := fake.Pulls()
	if len(pulls) != 1 {
		t.Fatalf("pull requests: %v", pulls)
	}
	pr, _ := fake.Issue(pulls[0])
	head := gitRun(t, f.root, "--git-dir", f.origin, "rev-parse", "refs/heads/"+pr.Head)
	rev := dispatched("reviewer.yml")
	if rev.Inputs["PR"] != strconv.Itoa(pr.Number) {
		t.Fatalf("reviewer dispatched with %+v, want PR=%d", rev.Inputs, pr.Number)
	}

	verdict, _ := json.Marshal(map[string]any{"verdict": "approve", "summary": "Small and clear.", "headSha": head, "pullRequest": pr.Number})
	revModel := modelfake.Start(modelfake.Turn{JSON: verdict})
	defer revModel.Close()
	rv := values(revModel, "workflow_dispatch", rev.Inputs)
	if out, ran := r.job(wf("reviewer"), "agent", rv, false); !ran || revModel.Err() != nil {
		t.Fatalf("reviewer: ran %v, model %v\n%s", ran, revModel.Err(), out)
	}
	ci := exec.Command("curl", "-sSf", "-X", "POST", "-H", "Authorization: Bearer ghs_e2e", fake.URL+"repos/o/r/statuses/"+head, "-d", `{"state":"success","context":"ci"}`)
	if out, err := ci.CombinedOutput(); err != nil {
		t.Fatalf("ci status: %v\n%s", err, out)
	}
	if out, ran := r.job(wf("reviewer"), "review", rv, false); !ran {
		t.Fatalf("the review job was skipped\n%s", out)
	}
	var review string
	for _, s := range fake.Statuses(head) {
		if s.Context == effect.StatusContext {
			review = s.State
		}
	}
	if review != "success" {
		t.Fatalf("%s on %s is %q, want success: %+v", effect.StatusContext, head, review, fake.Statuses(head))
	}
	if ok, why := fake.Mergeable(pr.Number); !ok {
		t.Fatalf("not mergeable: %s", why)
	}
	if !strings.HasPrefix(pr.Head, effect.BranchPrefix+"develop/") {
		t.Errorf("the proposal's branch is %s", pr.Head)
	}
}
