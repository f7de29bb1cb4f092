package ir

import (
	"fmt"
	"strings"
	"testing"
)

func TestCondenseReportsACauseOnce(t *testing.T) {
	var ds Diagnostics
	for i := range 4215 {
		ds = append(ds, Diagnostic{File: "ir.yml", Pos: Pos{Line: 10 + i, Col: 9}, Severity: Warning,
			Message: fmt.Sprintf("actor %q: local unsupported trigger:event: never fires", fmt.Sprint("w-", i)), Hint: "give it a cron"})
	}
	ds = append(ds,
		Diagnostic{File: "ir.yml", Pos: Pos{Line: 5, Col: 1}, Severity: Warning, Message: `actor "x": deprecated alias`},
		Diagnostic{File: "ir.yml", Pos: Pos{Line: 6, Col: 1}, Severity: Error, Message: `actor "e1": unknown key`},
		Diagnostic{File: "ir.yml", Pos: Pos{Line: 7, Col: 1}, Severity: Error, Message: `actor "e2": unknown key`},
		Diagnostic{File: "ir.yml", Pos: Pos{Line: 8, Col: 1}, Severity: Error, Message: `actor "e3": unknown key`},
		Diagnostic{File: "ir.yml", Pos: Pos{Line: 9, Col: 1}, Severity: Error, Message: `actor "e4": unknown key`},
		Diagnostic{File: "ir.yml", Pos: Pos{Line: 2, Col: 3}, Severity: Warning, Message: "maxConcurrent is not enforced"},
	)
	ds = ds.Sort()
	before := ds.String()
	got := ds.Condense().String()
	want := "ir.yml:2:3: warning: maxConcurrent is not enforced\n" +
		"ir.yml:5:1: warning: actor \"x\": deprecated alias\n" +
		"ir.yml:6:1: actor \"e1\": unknown key\n" +
		"ir.yml:7:1: actor \"e2\": unknown key\n" +
		"ir.yml:8:1: actor \"e3\": unknown key\n" +
		"ir.yml:9:1: actor \"e4\": unknown key\n" +
		"ir.yml:10:9: warning: actor \"w-0\": local unsupported trigger:event: never fires; also actor \"w-1\" at ir.yml:11:9, actor \"w-2\" at ir.yml:12:9 … and 4,212 more actors (give it a cron)\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if ds.String() != before {
		t.Error("Condense changed its receiver")
	}
}

func TestCondenseCountsActorsAndPlaces(t *testing.T) {
	var ds Diagnostics
	for i := range 10 {
		ds = append(ds, Diagnostic{File: "f", Pos: Pos{Line: 1 + i, Col: 1}, Severity: Warning, Message: fmt.Sprintf("actor \"a%d\": same", i/2)})
	}
	got := ds.Condense().String()
	want := "f:1:1: warning: actor \"a0\": same; also actor \"a0\" at f:2:1, actor \"a1\" at f:3:1 … and 7 more places (3 more actors)\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestCondenseKeepsAFewAsTheyAre(t *testing.T) {
	var ds Diagnostics
	for i := range CondenseShown {
		ds = append(ds, Diagnostic{File: "ir.yml", Pos: Pos{Line: 1 + i, Col: 1}, Severity: Warning, Message: fmt.Sprintf("actor \"a%d\": same", i)})
	}
	if got := ds.Condense().String(); got != ds.String() || strings.Count(got, "\n") != CondenseShown {
		t.Errorf("condensed %d warnings:\n%s", CondenseShown, got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 4212: "4,212", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
