//go:build unix

package engine

import (
	"context"
	"fmt"
	osexec "os/exec"
	"strings"
	"testing"
)

// BenchmarkRun100True runs a 100-step workflow of cli true. The runtime's overhead is the time
// per run less 100 bare execs of true (BenchmarkExecTrue100). Target: under 1 s of overhead.
func BenchmarkRun100True(b *testing.B) {
	var wf strings.Builder
	wf.WriteString("name: hundred\nsteps:\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&wf, "  - id: s%d\n    command: cli true\n", i)
	}
	e, ws, file := setup(b, wf.String())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if env := e.Run(context.Background(), Request{Pipeline: file, Workspace: ws}); !env.OK {
			b.Fatal(env.Error)
		}
	}
}

// BenchmarkExecTrue100 is the floor of BenchmarkRun100True: 100 bare execs of true.
func BenchmarkExecTrue100(b *testing.B) {
	p, _ := osexec.LookPath("true")
	for i := 0; i < b.N; i++ {
		for j := 0; j < 100; j++ {
			if err := osexec.Command(p).Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkResume measures a resume, from redeeming the token to the next envelope (the
// resumed workflow pauses again at its next gate). Target: under 50 ms.
func BenchmarkResume(b *testing.B) {
	var wf strings.Builder
	wf.WriteString("name: gates\nsteps:\n  - id: first\n    command: cli true\n")
	for i := 0; i < 2; i++ {
		fmt.Fprintf(&wf, "  - id: g%d\n    command: cli true\n    approval: required\n", i)
	}
	e, ws, file := setup(b, wf.String())
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tok := e.Run(ctx, Request{Pipeline: file, Workspace: ws}).RequiresApproval.ResumeToken
		b.StartTimer()
		if env := e.Resume(ctx, tok, true); env.Status != StatusNeedsApproval {
			b.Fatal(env)
		}
	}
}
