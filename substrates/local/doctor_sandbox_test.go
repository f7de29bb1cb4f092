//go:build linux

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Linux an agent's session runs in the network sandbox, which needs the system's bwrap and
// socat whatever a CLI bundles: doctor says so once per program, never an ok line for codex's
// bundled bubblewrap beside a fix line for the same bwrap, and names the presets' own sandboxes
// that run it too.
func TestDoctorChecksEachSandboxProgramOnce(t *testing.T) {
	for _, c := range []struct {
		preset string
		fakes  []string          // the programs on PATH
		want   map[string]string // bwrap/socat: the one line doctor prints of it
	}{
		{"codex", []string{"socat"}, map[string]string{
			"bwrap": "fix  network sandbox bwrap: bwrap is not on PATH: install bubblewrap (e.g. apt-get install bubblewrap socat): an agent's session runs in a network sandbox made with bwrap and socat (docs/local.md#egress); codex bundles a bubblewrap for its own sandbox, but the network sandbox needs the system's",
			"socat": "ok   network sandbox socat: BIN/socat"}},
		{"codex", []string{"bwrap", "socat"}, map[string]string{
			"bwrap": "ok   network sandbox bwrap: BIN/bwrap (codex's own sandbox runs it too)",
			"socat": "ok   network sandbox socat: BIN/socat"}},
		{"claude", nil, map[string]string{
			"bwrap": "fix  network sandbox bwrap: bwrap is not on PATH (claude's own sandbox needs it too): install bubblewrap (e.g. apt-get install bubblewrap socat): an agent's session runs in a network sandbox made with bwrap and socat (docs/local.md#egress)",
			"socat": "fix  network sandbox socat: socat is not on PATH (claude's own sandbox needs it too): install socat (e.g. apt-get install bubblewrap socat): an agent's session runs in a network sandbox made with bwrap and socat (docs/local.md#egress)"}},
		{"claude", []string{"bwrap", "socat"}, map[string]string{
			"bwrap": "ok   network sandbox bwrap: BIN/bwrap (claude's own sandbox runs it too)",
			"socat": "ok   network sandbox socat: BIN/socat (claude's own sandbox runs it too)"}},
	} {
		dir := installFleet(t, handsFleet(c.preset), false)
		bin := t.TempDir()
		for _, name := range c.fakes {
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string][]string{}
		for _, ch := range Doctor(context.Background(), dir, []string{"PATH=" + bin}) {
			line := "ok   " + ch.Name + ": " + ch.Detail
			if !ch.OK {
				line = "fix  " + ch.Name + ": " + ch.Detail + ": " + ch.Fix
			}
			for _, h := range []string{"bwrap", "socat"} {
				if strings.Contains(ch.Name, h) {
					got[h] = append(got[h], strings.ReplaceAll(line, bin, "BIN"))
				}
			}
		}
		for _, h := range []string{"bwrap", "socat"} {
			if len(got[h]) != 1 || got[h][0] != c.want[h] {
				t.Errorf("%s with %v on PATH: doctor's lines of %s:\n%s\nwant:\n%s", c.preset, c.fakes, h, strings.Join(got[h], "\n"), c.want[h])
			}
		}
	}
}
