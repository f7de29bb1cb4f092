//go:build unix

package effect_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/modelfake"
)

// TestPMLaunchesThroughTheRunner: the PM's job, run as its compiled workflow declares with the
// real codex CLI playing a scripted model, launches develop for the work item through
// `"$AUTONOMY_BIN" runner launch develop --ref N --branch …`, as its skill writes it (the job
// installs autonomy and makes gh-actions the runner's default; --branch is noted and ignored,
// GitHub runs the default branch). The model's job holds no write token: the launch is recorded
// as a launch effect, and pm's apply job dispatches it. The PM's cancel is refused (it holds no
// agent:cancel), in its next session, where list shows the run; the operator's cancel
// cancels it.
func TestPMLaunchesThroughTheRunner(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	item := strconv.Itoa(f.item)
	// The calls as the PM's skill writes them for any substrate, with the installed binary: the
	// job makes gh-actions the runner's default.
	const runner = `"$AUTONOMY_BIN" runner `
	pm := modelfake.Start(
		modelfake.Turn{Shell: runner + `launch develop --ref ` + item + ` --branch agent/issue-` + item},
		finalResult("Launched develop."),
	)
	defer pm.Close()
	v := f.values(pm, "schedule", nil)
	if out, ran := f.r.job(f.wf("pm"), "agent", v, false); !ran || pm.Err() != nil {
		t.Fatalf("pm: ran %v, model %v\n%s", ran, pm.Err(), out)
	}
	if runs := f.fake.Runs(); len(runs) != 0 {
		t.Fatalf("the model's job dispatched %+v", runs)
	}
	outputs := lastOutputs(pm)
	if len(outputs) != 1 {
		t.Fatalf("tool outputs %q", outputs)
	}
	if !strings.Contains(outputs[0], "queued launch") || !strings.Contains(outputs[0], "--branch") {
		t.Errorf("the launch told the model %q, want queued, --branch ignored", outputs[0])
	}
	if out, ran := f.r.job(f.wf("pm"), "apply", v, false); !ran {
		t.Fatalf("the apply job was skipped\n%s", out)
	}
	dev := f.dispatched("develop.yml")
	id := strconv.FormatInt(dev.ID, 10)
	if dev.Inputs["ISSUE"] != item || len(f.fake.Runs()) != 1 {
		t.Fatalf("develop dispatched with %+v; runs %+v", dev.Inputs, f.fake.Runs())
	}
	next := modelfake.Start(modelfake.Turn{Shell: runner + `list`}, modelfake.Turn{Shell: runner + `cancel ` + id + ` || echo "cancel exit $?"`}, modelfake.Turn{Text: "Listed."})
	defer next.Close()
	if out, ran := f.r.job(f.wf("pm"), "agent", f.values(next, "schedule", nil), false); !ran || next.Err() != nil {
		t.Fatalf("pm: ran %v, model %v\n%s", ran, next.Err(), out)
	}
	// (The params of a run the apply job dispatched do not ride in its title: list shows none.)
	out := lastOutputs(next)
	if len(out) != 2 || !strings.Contains(out[0], id) || !strings.Contains(out[0], "develop") {
		t.Fatalf("list told the model %q, want run %s of develop", out, id)
	}
	if !strings.Contains(out[1], "denied") || !strings.Contains(out[1], "agent:cancel") || !strings.Contains(out[1], "cancel exit 1") {
		t.Errorf("the pm's cancel: %q, want refused for want of agent:cancel", out[1])
	}
	if run, _ := f.fake.Run(dev.ID); run.CancelRequested {
		t.Fatal("a refused cancel cancelled the run")
	}
	// The operator cancels it (outside any fleet job: only the token bounds it).
	cancel := exec.Command(f.bin, "runner", "--substrate", "gh-actions", "--dir", f.root+"/seed", "cancel", id)
	cancel.Env = append(os.Environ(), "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL="+f.fake.URL, "GH_TOKEN=ghs_e2e", "AUTONOMY_ACTOR=")
	if out, err := cancel.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != id+" cancelled" {
		t.Fatalf("operator cancel: %v\n%s", err, out)
	}
	if run, _ := f.fake.Run(dev.ID); !run.CancelRequested {
		t.Error("the operator's cancel did not reach GitHub")
	}
}
