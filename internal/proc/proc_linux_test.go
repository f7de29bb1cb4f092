package proc

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
)

// statLine builds a /proc/PID/stat line with all 52 fields the kernel writes, the named ones set.
func statLine(comm, state, pgrp, session, start string) string {
	f := make([]string, 52)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[1], f[2] = "4242", "("+comm+")", state
	f[3], f[4], f[5] = "1", pgrp, session
	f[21] = start
	return strings.Join(f, " ")
}

func TestParseStat(t *testing.T) {
	for _, comm := range []string{"sh", "a b", "x) (y", ") (", "((", "))", "S 1 2 3 4)", "", "tab\there", "new\nline"} {
		line := statLine(comm, "S", "4240", "4000", "987654321")
		got, err := parseStat(line)
		if err != nil {
			t.Errorf("comm %q: %v", comm, err)
			continue
		}
		want := stat{state: 'S', ppid: 1, pgrp: 4240, session: 4000, start: 987654321}
		if got != want {
			t.Errorf("comm %q: got %+v, want %+v", comm, got, want)
		}
	}
	zombie, err := parseStat(statLine("defunct) R (x", "Z", "7", "7", "12") + "\n")
	if err != nil || zombie.state != 'Z' || zombie.start != 12 {
		t.Errorf("zombie: got %+v, %v", zombie, err)
	}
}

func TestParseStatMalformed(t *testing.T) {
	for name, line := range map[string]string{
		"empty":           "",
		"no parentheses":  strings.NewReplacer("(", "", ")", "").Replace(statLine("init", "S", "1", "1", "5")),
		"no open paren":   strings.Replace(statLine("init", "S", "1", "1", "5"), "(", "", 1),
		"too few fields":  "1 (init) S 1 1 1 0",
		"long state":      statLine("init", "SS", "1", "1", "5"),
		"bad group":       statLine("init", "S", "x", "1", "5"),
		"bad parent":      strings.Replace(statLine("init", "S", "1", "1", "5"), ") S 1 ", ") S p ", 1),
		"bad session":     statLine("init", "S", "1", "y", "5"),
		"negative start":  statLine("init", "S", "1", "1", "-5"),
		"start overflows": statLine("init", "S", "1", "1", "99999999999999999999999"),
	} {
		if s, err := parseStat(line); err == nil {
			t.Errorf("%s: parsed %q as %+v, want an error", name, line, s)
		}
	}
}

func TestSysProcAttr(t *testing.T) {
	a := SysProcAttr()
	if !a.Setpgid || a.Pgid != 0 || a.Pdeathsig != 0 || a.Setsid {
		t.Errorf("SysProcAttr() = %+v, want a new group and no death signal", a)
	}
	if d := Detach(); !d.Setsid || d.Setpgid || d.Pdeathsig != 0 {
		t.Errorf("Detach() = %+v, want a new session only", d)
	}
}

// TestReadStatFileReadsWhatReadFileDoes: the direct read gives a stat file's bytes, and a missing
// process is fs.ErrNotExist, as with os.ReadFile.
func TestReadStatFileReadsWhatReadFileDoes(t *testing.T) {
	path := "/proc/" + strconv.Itoa(os.Getpid()) + "/stat"
	got, err := readStatFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The pid, name, parent and start time do not change between the two reads; the state (the
	// third field: running, sleeping) may.
	if f, w := strings.Fields(string(got)), strings.Fields(string(want)); len(f) < 22 || len(w) < 22 || f[0]+f[1]+f[3] != w[0]+w[1]+w[3] || f[21] != w[21] {
		t.Errorf("read %q, os.ReadFile %q", got, want)
	}
	if _, err := readStatFile("/proc/0/stat"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := readStatFile("/proc/self/environ"); err != nil && !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a long file: %v", err)
	}
}

func TestPidNS(t *testing.T) {
	a, err := PidNS()
	if err != nil || a == 0 {
		t.Fatalf("PidNS = %d, %v", a, err)
	}
	if b, _ := PidNS(); b != a {
		t.Errorf("PidNS changed: %d, then %d", a, b)
	}
}
