//go:build unix

package local

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A behavior replaced by a FIFO is refused at once, not waited for: a tick checks what is about
// to fire inside its write transaction, which every other write of the store waits for
// (attack25).
func TestABehaviorThatIsAFIFOIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	dir := installFleet(t, editedFleet, false)
	path := filepath.Join(dir, ".autonomy", "scripts", "job.sh")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, dir, Options{})
	done := make(chan error, 1)
	go func() {
		_, err := r.Launch(context.Background(), LaunchRequest{Actor: "job"})
		done <- err
	}()
	select {
	case err := <-done:
		refused(t, err, "is not the file autonomy installed (not a regular file)")
	case <-time.After(20 * time.Second):
		f, _ := os.OpenFile(path, os.O_WRONLY, 0) // let it go
		f.Close()
		t.Fatal("the launch waited on the FIFO")
	}
}
