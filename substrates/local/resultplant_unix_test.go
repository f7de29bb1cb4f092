//go:build unix

package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autonomyhq/autonomy/ir"
)

// plantFleet is a fleet whose planter session runs plant (a shell snippet with d the results
// folder, n and t the next session id's number and tag) and then delivers its own result; the
// victim delivers nothing and exits 0.
func plantFleet(t *testing.T, plant string) string {
	t.Helper()
	return installFleet(t, fleet{yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  planter:
    behavior: skills/work
    triggers: [{ dispatch: true }]
  victim:
    behavior: skills/work
    triggers: [{ dispatch: true }]
policy:
  box:
    local:
      agent: [/bin/sh, -c, 'cat >/dev/null; if [ "$AUTONOMY_AGENT" = planter ]; then d=$(dirname "$AUTONOMY_RESULT"); n=${AUTONOMY_SESSION%%-*}; t=${AUTONOMY_SESSION#*-}; ` + plant + `; printf "{\"status\":\"done\",\"summary\":\"ok\"}" > "$AUTONOMY_RESULT"; fi; exit 0']
`, files: map[string]string{"skills/work/SKILL.md": "# work\nDo it.\n"}}, false)
}

// A session that plants the results of the next session ids (its own id reveals the instance
// tag) does not make a later session that delivers nothing done: the supervisor clears a
// session's result path before it starts.
func TestPlantedResultIsCleared(t *testing.T) {
	dir := plantFleet(t, `for i in 1 2 3; do printf "{\"status\":\"done\",\"summary\":\"forged\"}" > "$d/$((n+i))-$t.json"; done`)
	r := newRunner(t, dir, Options{})
	if p := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "planter"}).ID); p.Status != ir.Done {
		t.Fatalf("planter: %s %s", p.Status, p.Reason)
	}
	v := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "victim"}).ID)
	if v.Status != ir.Failed || !strings.Contains(v.Reason, "no result") {
		t.Errorf("victim delivered nothing but is %s (%q, %q): a planted result was taken for its own", v.Status, v.Reason, v.Verified)
	}
	r.Wait()
}

// A FIFO planted at the next session's result path neither hangs its supervisor nor lets
// whoever writes into it choose the result.
func TestPlantedFIFOResultDoesNotHang(t *testing.T) {
	dir := plantFleet(t, `mkfifo "$d/$((n+1))-$t.json"`)
	r := newRunner(t, dir, Options{})
	waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "planter"}).ID)
	v := waitEnded(t, r, launch(t, r, LaunchRequest{Actor: "victim"}).ID)
	if v.Status != ir.Failed {
		t.Errorf("victim delivered nothing but is %s (%q)", v.Status, v.Verified)
	}
	r.Wait()
}

// readResultFile refuses a link, a FIFO and a file over the cap, and reads a plain file.
func TestReadResultFileRefusesLinksFIFOsAndHugeFiles(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.json")
	if err := os.WriteFile(plain, []byte(`{"status":"done"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := readResultFile(plain); err != nil || string(data) != `{"status":"done"}` {
		t.Fatalf("plain file: %q %v", data, err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, make([]byte, maxResultFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, fifo, zero, huge} {
		if data, err := readResultFile(p); err == nil {
			t.Errorf("%s: read %d bytes, want an error", filepath.Base(p), len(data))
		}
	}
	if _, err := readResultFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo: %v, want it named not a regular file", err)
	}
}

// The status a result reports is read by its exact key, as the contract's schema reads it: a
// "Status" beside "status" does not make a failed result done.
func TestReportedStatusIsTheExactKey(t *testing.T) {
	for _, submitted := range []string{
		`{"status":"failed","summary":"I could not do it","Status":"done"}`,
		`{"STATUS":"done","status":"failed","summary":"I could not do it"}`,
	} {
		st, ok := reported(nil, submitted, true)
		if !ok || st.Status != "failed" || st.Summary != "I could not do it" {
			t.Errorf("%s: reported %+v %v, want failed", submitted, st, ok)
		}
	}
	var doc any
	_ = json.Unmarshal([]byte(`{"status":"failed","summary":"x","Status":"done"}`), &doc)
	if st, ok := reported(doc, "", true); !ok || st.Status != "failed" {
		t.Errorf("result file: reported %+v %v, want failed", st, ok)
	}
}
