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
// GitHub runs the default branch): the run
// id comes back in the launch's output, list shows it with its params, and the PM's cancel is
// refused (it holds no agent:cancel); the operator's cancel cancels it.
func TestPMLaunchesThroughTheRunner(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	item := strconv.Itoa(f.item)
	// The calls as the PM's skill writes them for any substrate, with the installed binary: the
	// job makes gh-actions the runner's default.
	const runner = `"$AUTONOMY_BIN" runner `
	pm := modelfake.Start(
		modelfake.Turn{Shell: runner + `launch develop --ref ` + item + ` --branch agent/issue-` + item},
		modelfake.Turn{Shell: runner + `list`},
		modelfake.Turn{Shell: `id="$(` + runner + `list --format json | jq -r '.sessions[0].id')"; ` + runner + `cancel "$id" || echo "cancel exit $?"`},
		modelfake.Turn{Text: "Launched develop."},
	)
	defer pm.Close()
	if out, ran := f.r.job(f.wf("pm"), "agent", f.values(pm, "schedule", nil), false); !ran || pm.Err() != nil {
		t.Fatalf("pm: ran %v, model %v\n%s", ran, pm.Err(), out)
	}
	dev := f.dispatched("develop.yml")
	id := strconv.FormatInt(dev.ID, 10)
	if dev.Inputs["ISSUE"] != item || len(f.fake.Runs()) != 1 {
		t.Fatalf("develop dispatched with %+v; runs %+v", dev.Inputs, f.fake.Runs())
	}
	var outputs []string
	for _, r := range pm.Scripted() {
		if n := len(r.ToolOutputs); n > 0 {
			outputs = append(outputs, r.ToolOutputs[n-1])
		}
	}
	if len(outputs) != 3 {
		t.Fatalf("tool outputs %q", outputs)
	}
	if !strings.Contains(outputs[0], id) || !strings.Contains(outputs[0], "--branch") {
		t.Errorf("the launch told the model %q, not the run id %s", outputs[0], id)
	}
	if !strings.Contains(outputs[1], id) || !strings.Contains(outputs[1], `ISSUE="`+item+`"`) || !strings.Contains(outputs[1], "develop") {
		t.Errorf("list told the model %q, want run %s of develop with ISSUE=%s", outputs[1], id, item)
	}
	if !strings.Contains(outputs[2], "denied") || !strings.Contains(outputs[2], "agent:cancel") || !strings.Contains(outputs[2], "cancel exit 1") {
		t.Errorf("the pm's cancel: %q, want refused for want of agent:cancel", outputs[2])
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
