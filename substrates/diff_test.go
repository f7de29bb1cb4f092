package substrates

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// numbered is "line1\n" … "lineN\n", with some lines replaced: replace[i] is line i's new text.
func numbered(n int, replace map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := replace[i]; ok {
			b.WriteString(s)
			continue
		}
		fmt.Fprintf(&b, "line%d\n", i)
	}
	return b.String()
}

func TestUnifiedDiff(t *testing.T) {
	const head = "--- f.yml (on disk)\n+++ f.yml (compiled)\n"
	tests := []struct {
		name             string
		onDisk, compiled string
		want             string // without the two header lines
	}{
		{
			name:     "identical",
			onDisk:   "a\n",
			compiled: "a\n",
			want:     "",
		},
		{
			name:     "one changed line in the middle of a long file",
			onDisk:   numbered(40, nil),
			compiled: numbered(40, map[int]string{20: "twenty\n"}),
			want:     "@@ -17,7 +17,7 @@\n line17\n line18\n line19\n-line20\n+twenty\n line21\n line22\n line23\n",
		},
		{
			name:     "insertion at the start",
			onDisk:   "a\nb\nc\nd\ne\n",
			compiled: "new\na\nb\nc\nd\ne\n",
			want:     "@@ -1,3 +1,4 @@\n+new\n a\n b\n c\n",
		},
		{
			name:     "deletion at the end",
			onDisk:   "a\nb\nc\nd\ne\n",
			compiled: "a\nb\nc\nd\n",
			want:     "@@ -2,4 +2,3 @@\n b\n c\n d\n-e\n",
		},
		{
			name:     "two distant changes make two hunks",
			onDisk:   numbered(20, nil),
			compiled: numbered(20, map[int]string{3: "THREE\n", 17: "SEVENTEEN\n"}),
			want: "@@ -1,6 +1,6 @@\n line1\n line2\n-line3\n+THREE\n line4\n line5\n line6\n" +
				"@@ -14,7 +14,7 @@\n line14\n line15\n line16\n-line17\n+SEVENTEEN\n line18\n line19\n line20\n",
		},
		{
			name:     "two near changes share a hunk",
			onDisk:   numbered(20, nil),
			compiled: numbered(20, map[int]string{5: "FIVE\n", 10: "TEN\n"}),
			want:     "@@ -2,12 +2,12 @@\n line2\n line3\n line4\n-line5\n+FIVE\n line6\n line7\n line8\n line9\n-line10\n+TEN\n line11\n line12\n line13\n",
		},
		{
			name:     "six lines apart still share a hunk (as diff -u)",
			onDisk:   numbered(20, nil),
			compiled: numbered(20, map[int]string{5: "FIVE\n", 12: "TWELVE\n"}),
			want:     "@@ -2,14 +2,14 @@\n line2\n line3\n line4\n-line5\n+FIVE\n line6\n line7\n line8\n line9\n line10\n line11\n-line12\n+TWELVE\n line13\n line14\n line15\n",
		},
		{
			name:     "seven lines apart split (as diff -u)",
			onDisk:   numbered(20, nil),
			compiled: numbered(20, map[int]string{5: "FIVE\n", 13: "X\n"}),
			want: "@@ -2,7 +2,7 @@\n line2\n line3\n line4\n-line5\n+FIVE\n line6\n line7\n line8\n" +
				"@@ -10,7 +10,7 @@\n line10\n line11\n line12\n-line13\n+X\n line14\n line15\n line16\n",
		},
		{
			name:     "missing final newline on disk",
			onDisk:   "a\nb\nc",
			compiled: "a\nb\nc\n",
			want:     "@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n",
		},
		{
			name:     "missing final newline in a context line",
			onDisk:   "a\nb\nc",
			compiled: "A\nb\nc",
			want:     "@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n",
		},
		{
			name:     "empty on disk",
			onDisk:   "",
			compiled: "a\nb\n",
			want:     "@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name:     "empty compiled",
			onDisk:   "a\nb\n",
			compiled: "",
			want:     "@@ -1,2 +0,0 @@\n-a\n-b\n",
		},
		{
			name:     "one-line ranges leave out the count",
			onDisk:   "a\n",
			compiled: "b\n",
			want:     "@@ -1 +1 @@\n-a\n+b\n",
		},
		{
			name:     "pure insertion in the middle names the line before",
			onDisk:   numbered(10, nil),
			compiled: numbered(10, map[int]string{5: "line5\nnew\n"}),
			want:     "@@ -3,6 +3,7 @@\n line3\n line4\n line5\n+new\n line6\n line7\n line8\n",
		},
		{
			name:     "lines that are not UTF-8 survive",
			onDisk:   "a\n\xff\xfe\n",
			compiled: "a\n\xff\xfd\n",
			want:     "@@ -1,2 +1,2 @@\n a\n-\xff\xfe\n+\xff\xfd\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want != "" {
				want = head + want
			}
			if got := UnifiedDiff("f.yml", []byte(tt.onDisk), []byte(tt.compiled)); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// applyDiff applies a unified diff to old as patch(1) would, checking every context and removed
// line against old, so a wrong line number or count fails.
func applyDiff(t *testing.T, old, diff string) string {
	t.Helper()
	oldLines := strings.SplitAfter(old, "\n")
	if oldLines[len(oldLines)-1] == "" {
		oldLines = oldLines[:len(oldLines)-1]
	}
	lines := strings.SplitAfter(diff, "\n")[2:] // skip ---/+++
	var out []string
	at := 0 // next old line to copy, 0-based
	for i := 0; i < len(lines) && lines[i] != ""; {
		m := hunkHeader.FindStringSubmatch(strings.TrimSuffix(lines[i], "\n"))
		if m == nil {
			t.Fatalf("not a hunk header: %q", lines[i])
		}
		start, _ := strconv.Atoi(m[1])
		count := 1
		if m[2] != "" {
			count, _ = strconv.Atoi(m[2])
		}
		if count > 0 {
			start-- // to 0-based; an empty range names the line before
		}
		out = append(out, oldLines[at:start]...)
		at = start
		seen := 0
		for i++; i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			text := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if at >= len(oldLines) || oldLines[at] != text {
					t.Fatalf("line %d: diff says %q, old has %q", at+1, text, oldLines[min(at, len(oldLines)-1)])
				}
				if l[0] == ' ' {
					out = append(out, text)
				}
				at++
				seen++
			case '+':
				out = append(out, text)
			}
		}
		if seen != count {
			t.Fatalf("hunk at %d says %d old lines, has %d", start, count, seen)
		}
	}
	out = append(out, oldLines[at:]...)
	return strings.Join(out, "")
}

// TestUnifiedDiffAppliesBack diffs many random edits of a text and applies each diff back: the
// result must be the compiled text exactly.
func TestUnifiedDiffAppliesBack(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e\n", "a", "x\n"}
	text := func() string {
		var b strings.Builder
		for n := r.IntN(30); n > 0; n-- {
			w := words[r.IntN(len(words)-2)]
			b.WriteString(w)
		}
		if r.IntN(3) == 0 {
			b.WriteString(words[5+r.IntN(2)]) // sometimes no final newline
		}
		return b.String()
	}
	for i := 0; i < 2000; i++ {
		old, new := text(), text()
		diff := UnifiedDiff("f", []byte(old), []byte(new))
		if old == new {
			if diff != "" {
				t.Fatalf("identical texts gave %q", diff)
			}
			continue
		}
		if got := applyDiff(t, old, diff); got != new {
			t.Fatalf("applying the diff of %q to %q gave %q:\n%s", old, new, got, diff)
		}
	}
}

func TestUnifiedDiffOfHugeFilesDoesNotPanic(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < maxDiffLines/2+10; i++ {
		fmt.Fprintf(&a, "%d\n", i)
		fmt.Fprintf(&b, "%d\n", i+1)
	}
	diff := UnifiedDiff("big", []byte(a.String()), []byte(b.String()))
	if !strings.HasPrefix(diff, "--- big (on disk)\n+++ big (compiled)\n@@ -1,500010 +1,500010 @@\n-0\n") {
		t.Errorf("diff starts %q", diff[:min(len(diff), 80)])
	}
}
