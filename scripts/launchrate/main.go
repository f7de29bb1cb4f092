// Command launchrate measures launches per second through the CLI: P concurrent processes each
// run `autonomy runner launch` N times on a fresh local installation of one trivial actor (a
// script that writes its result, autonomy.result.v1, and exits). It reports the launch rate (wall), then waits for every session's
// supervisor and script to end and reports the CPU (user+sys) of all the processes a launch
// costs (the CLI, its detached supervisor, the script), per launch: on a quiet machine of C
// cores the rate is bounded by C / that CPU. It becomes the subreaper of what it starts (Linux),
// so the detached supervisors' CPU is counted too.
//
//	go build -o /tmp/autonomy ./cmd/autonomy && go run ./scripts/launchrate -bin /tmp/autonomy -p 4 -n 100
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

func main() {
	bin := flag.String("bin", "autonomy", "the autonomy binary to measure")
	procs := flag.Int("p", 4, "concurrent CLI processes")
	n := flag.Int("n", 100, "launches per process")
	flag.Parse()
	if err := run(*bin, *procs, *n); err != nil {
		fmt.Fprintln(os.Stderr, "launchrate:", err)
		os.Exit(1)
	}
}

const profile = `schema: autonomy.ir.v1
targets: [local]
actors:
  worker:
    behavior: scripts/true.sh
    triggers: [{ dispatch: true, params: { ITEM: subject.ref } }]
`

func run(bin string, procs, n int) error {
	if procs < 1 || n < 1 {
		return fmt.Errorf("-p and -n must be at least 1")
	}
	if err := subreaper(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "launchrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	prof, inst := filepath.Join(tmp, "profile"), filepath.Join(tmp, "fleet")
	if err := os.MkdirAll(filepath.Join(prof, "scripts"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(prof, "ir.yml"), []byte(profile), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(prof, "scripts", "true.sh"), []byte("#!/bin/sh\nprintf '{\"status\":\"done\",\"summary\":\"ok\"}\\n' > \"$AUTONOMY_RESULT\"\n"), 0o755); err != nil {
		return err
	}
	if out, err := exec.Command(bin, "compile", prof, "--target", "local", "--dir", inst).CombinedOutput(); err != nil {
		return fmt.Errorf("compile: %v\n%s", err, out)
	}
	// The first launch creates the database: not measured.
	if out, err := exec.Command(bin, "runner", "--dir", inst, "launch", "worker", "--ref", "0").CombinedOutput(); err != nil {
		return fmt.Errorf("launch: %v\n%s", err, out)
	}
	if err := reapAll(); err != nil {
		return err
	}
	before, err := childrenCPU()
	if err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				ref := fmt.Sprintf("%d-%d", p, i)
				if out, err := exec.Command(bin, "runner", "--dir", inst, "launch", "worker", "--ref", ref).CombinedOutput(); err != nil {
					errs <- fmt.Errorf("launch %s: %v\n%s", ref, err, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := reapAll(); err != nil {
		return err
	}
	after, err := childrenCPU()
	if err != nil {
		return err
	}
	total := procs * n
	cpu := after - before
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("launches=%d procs=%d wall=%.2fs rate=%.0f/s cpu=%.2fs cpu/launch=%.2fms quiet-2-core-bound=%.0f/s load=%.20s\n",
		total, procs, wall.Seconds(), float64(total)/wall.Seconds(), cpu.Seconds(),
		float64(cpu.Microseconds())/1000/float64(total), 2/(cpu.Seconds()/float64(total)), load)
	return nil
}
