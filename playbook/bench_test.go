//go:build unix

package playbook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/playbook/overlay"
)

// fleet writes n playbooks of each format into a new directory (one overlay package with its
// index) and returns it. Every playbook is valid.
func fleet(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		return string(data)
	}
	capsule := read("capsule/testdata/good/release.playbook.md")
	over := read("overlay/testdata/good/flag-contradictions.md")
	step := read("steps/testdata/good/debt-assessment.md")
	flow := read("workflow/testdata/good/inbox-triage.yml")
	for _, d := range []string{"capsules", "overlays", "steps", "workflows"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	write := func(path, data string) {
		if err := os.WriteFile(filepath.Join(dir, path), []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		c := strings.Replace(capsule, "uid: 3f2a9c1e", fmt.Sprintf("uid: %08x", i), 1)
		write(fmt.Sprintf("capsules/p%04d.playbook.md", i), strings.Replace(c, "trigger: release-requested", fmt.Sprintf("trigger: t%d", i), 1))
		o := strings.Replace(over, "slug: flag-contradictions-explicitly", fmt.Sprintf("slug: overlay-%04d", i), 1)
		write(fmt.Sprintf("overlays/o%04d.md", i), strings.Replace(o, "supersedes: [mention-contradictions]\n", "", 1))
		write(fmt.Sprintf("steps/s%04d.md", i), step)
		write(fmt.Sprintf("workflows/w%04d.yml", i), flow)
	}
	pkg, _, err := LoadPackage(filepath.Join(dir, "overlays"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := overlay.WriteIndex(pkg); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BenchmarkValidate1000 validates 1,000 playbooks of each format in one call, as
// `autonomy playbook validate DIR` does: each format's folder alone, and all four (4,000 files
// and an overlay index) together. Target: under 300 ms for 1,000 playbooks.
func BenchmarkValidate1000(b *testing.B) {
	dir := fleet(b, 1000)
	for _, c := range []struct {
		name, path string
		files      int
	}{
		{"capsule", "capsules", 1000}, {"overlay", "overlays", 1001}, {"steps", "steps", 1000}, {"workflow", "workflows", 1000}, {"all", "", 4001},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(dir, c.path)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := ValidatePaths([]string{path})
				if len(res.Diagnostics) != 0 || len(res.Files) != c.files {
					b.Fatalf("%d files, diagnostics:\n%s", len(res.Files), res.Diagnostics)
				}
			}
			// CPU time is the figure that holds on a loaded machine, where wall time mostly
			// measures the other processes.
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the user and system time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestFleetIsValid(t *testing.T) {
	res := ValidatePaths([]string{fleet(t, 20)})
	if len(res.Diagnostics) != 0 || len(res.Files) != 81 {
		t.Fatalf("%d files, diagnostics:\n%s", len(res.Files), res.Diagnostics)
	}
}
