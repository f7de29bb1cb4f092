package fastyaml

import (
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	in := profile(10000)
	t.Logf("size %d", len(in))
	for r := 0; r < 3; r++ {
		c := cpuTime()
		w := time.Now()
		for i := 0; i < 10; i++ {
			Parse(in)
		}
		t.Logf("fast: cpu %v wall %v per op", (cpuTime()-c)/10, time.Since(w)/10)
	}
	c := cpuTime()
	w := time.Now()
	for i := 0; i < 2; i++ {
		var n yaml.Node
		yaml.Unmarshal(in, &n)
	}
	t.Logf("yaml: cpu %v wall %v per op", (cpuTime()-c)/2, time.Since(w)/2)
}
