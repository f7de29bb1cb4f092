//go:build unix

package local

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autonomyhq/autonomy/ir"
)

// TestCappedLog writes 40 times the cap in writes of random sizes: on disk the log never holds
// more than the cap, what it holds is exactly the end of what was written, at least half the cap,
// and the dropped count is the rest.
func TestCappedLog(t *testing.T) {
	t.Parallel()
	const max = 4096
	path := filepath.Join(t.TempDir(), "x.log")
	l, err := openCappedLog(path, max)
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; all.Len() < 40*max; i++ {
		p := []byte(strings.Repeat(strconv.Itoa(i)+" ", 1+rng.IntN(900)))
		if n, err := l.Write(p); err != nil || n != len(p) {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
		all.Write(p)
		if disk := size(t, path) + size(t, path+".1"); disk > max {
			t.Fatalf("after %d bytes the log holds %d bytes on disk, more than its cap %d", all.Len(), disk, max)
		}
	}
	l.Close()
	kept := readFile(t, path+".1") + readFile(t, path)
	if len(kept) < max/2 || !strings.HasSuffix(all.String(), kept) {
		t.Fatalf("kept %d bytes, not the end of what was written", len(kept))
	}
	if dropped, err := readDropped(path); err != nil || dropped != int64(all.Len()-len(kept)) {
		t.Errorf("dropped %d (%v), want %d", dropped, err, all.Len()-len(kept))
	}
}

func size(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

var chattyFleet = fleet{
	yml: `schema: autonomy.ir.v1
targets: [local]
actors:
  chatty:
    behavior: scripts/chatty.sh
    triggers: [{ dispatch: true }]
policy:
  box:
    local: { logMaxBytes: 65536 }
`,
	files: map[string]string{"scripts/chatty.sh": "#!/bin/sh\nseq 1 1000000\necho END >&2\n" + scriptDone},
}

// TestSessionLogCapped: a session writes 6.9 MB, a hundred times its log's cap. The log on disk
// stays within the cap, logs says how much was dropped, and prints the end of the output whole.
func TestSessionLogCapped(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, chattyFleet, false)
	r := newRunner(t, dir, Options{})
	s := launch(t, r, LaunchRequest{Actor: "chatty"})
	if got := waitEnded(t, r, s.ID); got.Status != ir.Done {
		t.Fatalf("%s %q", got.Status, got.Reason)
	}
	r.Wait()
	var total int
	for i := 1; i <= 1000000; i++ {
		total += len(strconv.Itoa(i)) + 1
	}
	total += len("END\n")
	if disk := size(t, s.LogPath) + size(t, s.LogPath+".1"); disk > 65536 {
		t.Errorf("the log holds %d bytes on disk; its cap is 65536", disk)
	}
	var out bytes.Buffer
	if err := r.FollowLogs(context.Background(), s.ID, false, &out); err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(out.String(), "\n")
	// The dropped bytes are the script's output the log no longer holds, plus any note the runner
	// wrote before the agent started (on a loaded machine, "queued: waiting for … the
	// installation root"), which the log dropped too: a line of under 1 KiB.
	var dropped int
	if _, err := fmt.Sscanf(head, "autonomy: %d bytes of earlier output were dropped: the log keeps the last 65536 bytes (policy.box.local.logMaxBytes)", &dropped); err != nil {
		t.Fatalf("first line of logs %q: %v", head, err)
	}
	if extra := dropped - (total - len(body)); extra < 0 || extra >= 1024 {
		t.Errorf("first line of logs says %d bytes were dropped; the script wrote %d and the log kept %d (%d unaccounted for)", dropped, total, len(body), extra)
	}
	if len(body) < 65536/2 || !strings.HasSuffix(body, "999999\n1000000\nEND\n") {
		t.Fatalf("logs kept %d bytes, ending %q", len(body), body[max(0, len(body)-40):])
	}
	// Every line kept but the first (cut in the middle) follows its predecessor.
	lines := strings.Split(strings.TrimSuffix(body, "\nEND\n"), "\n")[1:]
	for i := 1; i < len(lines); i++ {
		a, _ := strconv.Atoi(lines[i-1])
		b, err := strconv.Atoi(lines[i])
		if err != nil || b != a+1 {
			t.Fatalf("the kept output is not the contiguous end: %q after %q", lines[i], lines[i-1])
		}
	}
}

// slowWriter is a follower slower than the session it follows.
type slowWriter struct{ bytes.Buffer }

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	return w.Buffer.Write(p)
}

// TestFollowAcrossRotations: logs -f of a session whose log rotates hundreds of times while it is
// followed, by a reader slower than the session, ends when the session does, with the end of the
// output; it never prints a line twice or out of order, and says where output it could not read
// in time was dropped.
func TestFollowAcrossRotations(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, chattyFleet, false)
	r := newRunner(t, dir, Options{})
	s := launch(t, r, LaunchRequest{Actor: "chatty"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out slowWriter
	if err := r.FollowLogs(ctx, s.ID, true, &out); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("logs -f did not end with the session")
	}
	body := out.String()
	if !strings.HasSuffix(body, "999999\n1000000\nEND\n") {
		t.Fatalf("logs -f ended with %q", body[max(0, len(body)-40):])
	}
	// The output is runs of lines between notes of dropped output. A run's first and last lines
	// may be cut in the middle of a number; the others follow one another, and each run goes on
	// from a later number than the run before.
	last, notes := 0, 0
	for i, run := range strings.Split("\n"+strings.TrimSuffix(body, "\nEND\n")+"\n", "\nautonomy: ") {
		if i > 0 {
			notes++
			_, run, _ = strings.Cut(run, "\n") // the rest of the note
		}
		lines := strings.Split(strings.Trim(run, "\n"), "\n")
		if len(lines) < 3 {
			continue
		}
		for j, line := range lines[1 : len(lines)-1] {
			n, err := strconv.Atoi(line)
			if err != nil || j > 0 && n != last+1 || j == 0 && n <= last {
				t.Fatalf("run %d, line %d of logs -f is %q after %d", i, j+1, line, last)
			}
			last = n
		}
	}
	if last < 999999 {
		t.Errorf("the last run of logs -f ends at %d", last)
	}
	t.Logf("%d bytes followed, %d notes of dropped output", len(body), notes)
}
