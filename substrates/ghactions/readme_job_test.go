package ghactions

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/testfs"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
)

// readmeJob returns the CI job README offers to paste.
func readmeJob(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```yaml\nname: autonomy check\n"
	i := strings.Index(string(data), start)
	if i < 0 {
		t.Fatal("README has no autonomy check job")
	}
	job := string(data[i+len("```yaml\n"):])
	return job[:strings.Index(job, "```")]
}

// TestReadmeCheckJobRuns runs the README's CI job for real: it must build autonomy from a pinned
// checkout of its source (the module is not published, so no `go run …@latest`), and its run:
// steps, executed in a workspace holding this repository as that checkout and a compiled
// fleet, pass on a clean install and fail on a hand edit.
func TestReadmeCheckJobRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds autonomy")
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string
				With map[string]string
				Run  string
			}
		}
	}
	job := readmeJob(t)
	if err := yaml.Unmarshal([]byte(job), &wf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(job, "@latest") {
		t.Error("the job installs autonomy @latest, which cannot work until the module is published")
	}
	src := ""
	var runs []string
	for _, st := range wf.Jobs["check"].Steps {
		if strings.HasPrefix(st.Uses, "actions/checkout@") && st.With["repository"] == "autonomyhq/autonomy" {
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(st.With["ref"]) {
				t.Errorf("the autonomy checkout is pinned to %q, not a commit", st.With["ref"])
			}
			src = st.With["path"]
		}
		if st.Run != "" {
			runs = append(runs, st.Run)
		}
	}
	if src == "" || len(runs) == 0 {
		t.Fatalf("the job checks out no autonomy source, or runs nothing:\n%s", job)
	}
	// The workspace: the repository under check, with its profile in autonomy/ compiled into it,
	// and this autonomy checkout where the job puts the source.
	ws := t.TempDir()
	repoRoot, _ := filepath.Abs("../..")
	if err := os.Symlink(repoRoot, filepath.Join(ws, src)); err != nil {
		t.Fatal(err)
	}
	copyTree(t, "../../profiles/sdlc", filepath.Join(ws, "autonomy"))
	p, diags, err := ir.Check(filepath.Join(ws, "autonomy"))
	if err != nil || diags.HasErrors() {
		t.Fatalf("%v %s", err, diags)
	}
	out, err := substrates.Compile(Substrate{}, resolve(p), ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := substrates.Write(ws, &out, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	runJob := func() (string, error) {
		var all []byte
		runnerTemp := t.TempDir() // one per job, shared by its steps
		for _, r := range runs {
			cmd := exec.Command("bash", "-e", "-c", r)
			cmd.Dir = ws
			// The fleet was compiled by this test binary, which has no VCS stamp: the job's
			// autonomy is built without one too, so that both pin the same (nothing).
			cmd.Env = append(os.Environ(), "RUNNER_TEMP="+runnerTemp, "GOFLAGS=-buildvcs=false")
			b, err := cmd.CombinedOutput()
			all = append(all, b...)
			if err != nil {
				return string(all), err
			}
		}
		return string(all), nil
	}
	if log, err := runJob(); err != nil {
		t.Fatalf("the job fails on a clean install: %v\n%s", err, log)
	}
	wfPath := filepath.Join(ws, ".github/workflows/pm.yml")
	data, _ := os.ReadFile(wfPath)
	if err := os.WriteFile(wfPath, append(data, []byte("# edited\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if log, err := runJob(); err == nil || !strings.Contains(log, "pm.yml: changed") {
		t.Fatalf("the job passes on a hand edit (%v):\n%s", err, log)
	}
}

// copyTree copies a folder of regular files.
func copyTree(t *testing.T, from, to string) { testfs.CopyTree(t, from, to) }
